package dev.ratelimiter.core;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.UnaryOperator;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Turns a raw client identity (an API key as sent, or a rule's key values) into a fixed-length, charset-safe id: the
 * first 128 bits of HMAC-SHA256 under a secret (or, without one, of plain SHA-256), base64url.
 *
 * <p>Hashing rather than escaping serves two ends: any header value, of any length and with any bytes, maps into
 * {@code [A-Za-z0-9_-]{22}}, so it cannot break a key namespace or a Redis hash tag; and the API key itself is never
 * written to the store, the events or the actuator view. The secret serves a third: an unkeyed hash of a guessable
 * key ({@code acme-key}, an IP address) is reversed by hashing candidates, an HMAC only by someone who also holds the
 * secret. 128 bits make an accidental collision between two real keys negligible.
 *
 * <p>An instance is immutable apart from its memo of recent identities, so gateways with different secrets can share a JVM.
 */
public final class ClientIds {

    /** Fewer bytes than this is a password, not a key: it could be guessed from one id and its known API key. */
    public static final int MIN_SECRET_BYTES = 16;

    /** The {@link #scheme()} of the unkeyed hash. */
    public static final String UNKEYED_SCHEME = "sha256";

    private final String scheme;
    private final ThreadLocal<UnaryOperator<byte[]>> hash;

    /** Slots of {@link #recent}: a power of two. */
    static final int MEMO_SLOTS = 1 << 13;

    /** Identities longer than this are hashed every time: a memo of kilobyte headers would be mostly junk keys. */
    static final int LONGEST_MEMOIZED = 512;

    /**
     * Recent identities and their ids: a request asks for its client's id several times (its rules, each rule's
     * bucket, the decision event), and a hash costs more than a look-up. Direct-mapped (one identity per slot, the
     * newest wins) rather than a cache with an eviction policy: a bounded cache's writers wait on its eviction lock
     * when its maintenance falls behind, and a flood of rotating junk keys is exactly such a write storm, on the event
     * loops. Here a write is one plain store; a collision only costs a hash. At most {@link #MEMO_SLOTS} ×
     * ({@link #LONGEST_MEMOIZED} + the id) characters.
     */
    private final AtomicReferenceArray<Memo> recent = new AtomicReferenceArray<>(MEMO_SLOTS);

    private record Memo(String identity, String id) {
    }

    private ClientIds(String scheme, ThreadLocal<UnaryOperator<byte[]>> hash) {
        this.scheme = scheme;
        this.hash = hash;
    }

    /** Plain SHA-256: what every id was before secrets, and what they stay without one. */
    public static ClientIds unkeyed() {
        return new ClientIds(UNKEYED_SCHEME, ThreadLocal.withInitial(() -> {
            try {
                return MessageDigest.getInstance("SHA-256")::digest;
            }
            catch (GeneralSecurityException ex) {
                throw new IllegalStateException("every JVM must provide SHA-256", ex);
            }
        }));
    }

    /**
     * HMAC-SHA256 under {@code secret} (its UTF-8 bytes).
     *
     * @param setting the setting the secret comes from, named when it is refused
     * @throws InvalidLimitException when the secret is shorter than {@value #MIN_SECRET_BYTES} bytes
     */
    public static ClientIds keyed(String setting, String secret) {
        byte[] key = secret == null ? new byte[0] : secret.getBytes(StandardCharsets.UTF_8);
        if (key.length < MIN_SECRET_BYTES) {
            throw new InvalidLimitException(setting, setting + " is " + key.length + " bytes long, but must be at "
                    + "least " + MIN_SECRET_BYTES + " (a random string such as the output of 'openssl rand -base64 "
                    + "32'): client ids are only as hard to reverse as the secret is to guess.");
        }
        SecretKeySpec spec = new SecretKeySpec(key, "HmacSHA256");
        ThreadLocal<UnaryOperator<byte[]>> hmac = ThreadLocal.withInitial(() -> mac(spec)::doFinal);
        // A fingerprint names the secret in hashed API keys (hmac:<fingerprint>:<id>) without revealing it.
        byte[] fingerprint = hmac.get().apply("ratelimit client-id fingerprint".getBytes(StandardCharsets.UTF_8));
        return new ClientIds("hmac:" + HexFormat.of().formatHex(fingerprint, 0, 4), hmac);
    }

    private static Mac mac(SecretKeySpec key) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return mac;
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException("every JVM must provide HmacSHA256", ex);
        }
    }

    /** The id of a raw identity: {@code [A-Za-z0-9_-]{22}}. */
    public String of(String rawIdentity) {
        int hash = rawIdentity.hashCode();
        int slot = (hash ^ (hash >>> 16)) & (MEMO_SLOTS - 1);
        Memo memo = recent.getAcquire(slot);
        if (memo != null && memo.identity().equals(rawIdentity)) {
            return memo.id();
        }
        byte[] digest = this.hash.get().apply(rawIdentity.getBytes(StandardCharsets.UTF_8));
        String id = Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 16));
        if (rawIdentity.length() <= LONGEST_MEMOIZED) {
            recent.setRelease(slot, new Memo(rawIdentity, id));
        }
        return id;
    }

    /**
     * Which hash this is, as written in front of the ids it made: {@code sha256}, or {@code hmac:} and 8 hex digits
     * that tell secrets apart.
     */
    public String scheme() {
        return scheme;
    }

    public boolean isKeyed() {
        return !UNKEYED_SCHEME.equals(scheme);
    }

    /** An API key as it may be stored: {@code <scheme>:<id>}, e.g. {@code hmac:1a2b3c4d:Qm9…} (see {@link HashedApiKey}). */
    public HashedApiKey hashed(String apiKey) {
        return new HashedApiKey(scheme, of(apiKey));
    }

    @Override
    public String toString() {
        return "ClientIds[" + scheme + "]";
    }
}
