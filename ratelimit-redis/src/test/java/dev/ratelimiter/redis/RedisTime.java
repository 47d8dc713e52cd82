package dev.ratelimiter.redis;

import dev.ratelimiter.testsupport.RedisServerExtension;

/** A test Redis's own clock ({@code TIME}), the clock the scripts read, for tests that place calls on it. */
final class RedisTime {

    private RedisTime() {
    }

    /** Redis's time now, in microseconds. */
    static long micros(RedisServerExtension redis) {
        String[] parts = redis.command("TIME").trim().split("\\s+");
        return Long.parseLong(parts[0]) * 1_000_000 + Long.parseLong(parts[1]);
    }
}
