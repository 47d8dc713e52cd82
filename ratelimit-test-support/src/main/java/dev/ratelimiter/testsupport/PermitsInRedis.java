package dev.ratelimiter.testsupport;

import java.util.Arrays;
import java.util.List;

/** Reads the concurrency permits a test's Redis holds: every sorted set under {@code rl:} but the heartbeats. */
public final class PermitsInRedis {

    private PermitsInRedis() {
    }

    /** Permits held in every concurrency bucket. */
    public static long count(RedisServer redis) {
        long total = 0;
        for (String key : concurrencyBuckets(redis)) {
            total += Long.parseLong(redis.command("ZCARD", key).trim());
        }
        return total;
    }

    /** Every concurrency bucket with its permits and lease expiries, for an assertion's message. */
    public static String dump(RedisServer redis) {
        StringBuilder out = new StringBuilder();
        for (String key : concurrencyBuckets(redis)) {
            out.append(key).append(" -> ").append(redis.command("ZRANGE", key, "0", "-1", "WITHSCORES")
                    .replace('\n', ' ')).append("; ");
        }
        return out.toString();
    }

    private static List<String> concurrencyBuckets(RedisServer redis) {
        return Arrays.stream(redis.command("KEYS", "rl:*").split("\n"))
                .filter(key -> !key.isBlank() && !key.contains("{instances}"))
                .filter(key -> "zset".equals(redis.command("TYPE", key).trim()))
                .toList();
    }
}
