package dev.ratelimiter.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Lua scripts the limiter runs in Redis, each read once from the classpath as text, with its SHA-1 computed once.
 *
 * <p>Run by SHA ({@code EVALSHA}); when Redis answers {@code NOSCRIPT} (after a restart, a failover or
 * {@code SCRIPT FLUSH}) the body is sent once with {@code EVAL}, which also caches it again. Holding the text and the
 * digest — rather than a resource that a script object re-checks on every call — matters: resolving a classpath
 * resource inside a fat jar on every decision took nearly half the CPU of exact mode.
 */
public enum LimiterScript {

    /** Every check of one request, decided atomically. */
    RATE_LIMIT("rate_limit.lua"),
    /** Local mode: one instance settles its shares of many buckets. */
    SETTLE("settle.lua"),
    /** Exact mode: what the fallback admitted on its own, charged to the buckets when Redis answers again. */
    CHARGE("charge.lua"),
    /** Concurrency permits: give back or renew, many at once. */
    PERMITS("release_permits.lua"),
    /** The runtime rules, one consistent snapshot. */
    RULES_READ("rules_read.lua"),
    /** One change to the runtime rules, versioned and announced. */
    RULES_WRITE("rules_write.lua"),
    /** An instance's heartbeat and the count of instances alive. */
    HEARTBEAT("heartbeat.lua"),
    /** The usage API: buckets read without spending, creating or extending anything (declared no-writes). */
    PEEK("peek.lua");

    /** Where the scripts live on the classpath. */
    public static final String LOCATION = "META-INF/scripts/ratelimit/";

    private final String body;
    private final String sha1;

    LimiterScript(String file) {
        this.body = read(LOCATION + file);
        this.sha1 = sha1(body);
    }

    /** The script's text, as sent with {@code EVAL}. */
    public String body() {
        return body;
    }

    /** The lowercase hex SHA-1 of the text, as Redis names the script. */
    public String sha1() {
        return sha1;
    }

    private static String read(String location) {
        try (InputStream in = LimiterScript.class.getClassLoader().getResourceAsStream(location)) {
            if (in == null) {
                throw new IllegalStateException("The limiter's script " + location + " is not on the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Cannot read the limiter's script " + location, ex);
        }
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("every JVM must provide SHA-1", ex);
        }
    }
}
