package dev.ratelimiter.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

/**
 * Turns a raw client identity (an API key as sent) into a fixed-length, charset-safe id.
 *
 * <p>Hashing rather than escaping serves two ends: any header value, of any length and with any bytes,
 * maps into {@code [A-Za-z0-9_-]{22}}, so it cannot break a key namespace or a Redis hash tag; and the
 * API key itself is never written to the store, where anyone with read access could lift it. 128 bits
 * of SHA-256 make an accidental collision between two real keys negligible.
 */
public final class ClientIds {

    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("every JVM must provide SHA-256", ex);
        }
    });

    /**
     * Recent identities and their ids: a request asks for its client's id several times (each rule's bucket, the
     * decision event), and a hash costs more than a look-up. Bounded by size in characters (a header may be kilobytes
     * long), so rotating junk keys only churn it.
     */
    private static final Cache<String, String> recent = Caffeine.newBuilder().maximumWeight(8L << 20)
            .<String, String>weigher((identity, id) -> identity.length() + 64).build();

    private ClientIds() {
    }

    public static String of(String rawIdentity) {
        String id = recent.getIfPresent(rawIdentity);
        if (id == null) {
            id = hash(rawIdentity);
            recent.put(rawIdentity, id);
        }
        return id;
    }

    private static String hash(String rawIdentity) {
        byte[] digest = SHA_256.get().digest(rawIdentity.getBytes(StandardCharsets.UTF_8));
        return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 16));
    }
}
