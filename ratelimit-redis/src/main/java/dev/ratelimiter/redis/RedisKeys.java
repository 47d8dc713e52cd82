package dev.ratelimiter.redis;

import dev.ratelimiter.core.BucketKey;

/**
 * Builds Redis key names. The client id goes inside a {@code {…}} hash tag so that every bucket of one
 * client lands in the same Redis Cluster slot, where one script can check them together.
 *
 * <p>Local-mode buckets are never checked on the request path, only settled in bulk, so they are grouped the other
 * way: under one of {@value #SETTLE_SLOTS} hash tags {@code {s<n>}} picked by the client's partition, so that one
 * instance's settle is at most that many script calls on Redis Cluster, however many clients it serves.
 */
public final class RedisKeys {

    /** Hash tags local-mode buckets are spread over. */
    public static final int SETTLE_SLOTS = 16;

    private final String prefix;

    public RedisKeys(String prefix) {
        if (prefix == null || prefix.isBlank() || prefix.contains("{") || prefix.contains("}")
                || prefix.chars().anyMatch(c -> c <= ' ' || c > '~')) {
            throw new IllegalArgumentException("ratelimit.store.key-prefix must be printable ASCII without spaces, "
                    + "'{' or '}', but was '" + prefix + "'");
        }
        this.prefix = prefix;
    }

    /** e.g. {@code rl:{3q2-7wEX4t6Yk0cQv1mT9w}:free.default} */
    public String bucket(BucketKey key) {
        return prefix + ":{" + key.partition() + "}:" + key.name();
    }

    /** A local-mode bucket, e.g. {@code rl:{s7}:3q2-7wEX4t6Yk0cQv1mT9w:free.default}. */
    public String settledBucket(BucketKey key) {
        return prefix + ":{" + settleTag(key) + "}:" + key.partition() + ":" + key.name();
    }

    /** The hash tag a local-mode bucket lives under. */
    static String settleTag(BucketKey key) {
        return "s" + Math.floorMod(key.partition().hashCode(), SETTLE_SLOTS);
    }

    /** The prefix every key starts with. */
    public String prefix() {
        return prefix;
    }

    /** Pattern matching every key this limiter writes, for operators and tests. */
    public String pattern() {
        return prefix + ":*";
    }
}
