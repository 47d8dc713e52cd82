package dev.ratelimiter.redis;

import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The token bucket Lua script, loaded once from the classpath. Spring Data Redis runs it by SHA
 * ({@code EVALSHA}) and, when Redis answers {@code NOSCRIPT} (after a restart, a failover or
 * {@code SCRIPT FLUSH}), sends the body once with {@code EVAL}, which also reloads it.
 */
public final class TokenBucketScript {

    public static final String LOCATION = "META-INF/scripts/ratelimit/token_bucket.lua";

    private TokenBucketScript() {
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    public static RedisScript<List<Long>> load() {
        return (RedisScript) RedisScript.of(new ClassPathResource(LOCATION), List.class);
    }
}
