package dev.ratelimiter.redis;

import dev.ratelimiter.core.BucketKey;

/**
 * Builds Redis key names. The client id goes inside a {@code {…}} hash tag so that every bucket of one
 * client lands in the same Redis Cluster slot, where one script can check them together.
 */
public final class RedisKeys {

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

    /** The prefix every key starts with. */
    public String prefix() {
        return prefix;
    }

    /** Pattern matching every key this limiter writes, for operators and tests. */
    public String pattern() {
        return prefix + ":*";
    }
}
