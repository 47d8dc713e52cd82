package dev.ratelimiter.redis;

import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The rate-limit Lua script, loaded once from the classpath. Spring Data Redis runs it by SHA
 * ({@code EVALSHA}) and, when Redis answers {@code NOSCRIPT} (after a restart, a failover or
 * {@code SCRIPT FLUSH}), sends the body once with {@code EVAL}, which also reloads it.
 */
public final class RateLimitScript {

    public static final String LOCATION = "META-INF/scripts/ratelimit/rate_limit.lua";

    private RateLimitScript() {
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    public static RedisScript<List<Long>> load() {
        return (RedisScript) RedisScript.of(new ClassPathResource(LOCATION), List.class);
    }
}
