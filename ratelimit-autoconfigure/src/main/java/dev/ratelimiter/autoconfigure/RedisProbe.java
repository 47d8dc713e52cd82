package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** The start-up check behind {@code ratelimit.store.type=auto}: does Redis answer a PING in time? */
final class RedisProbe {

    private RedisProbe() {
    }

    static boolean answers(ReactiveRedisConnectionFactory connectionFactory, Duration timeout) {
        try (ReactiveRedisConnection connection = connectionFactory.getReactiveConnection()) {
            return "PONG".equalsIgnoreCase(connection.ping().block(timeout));
        }
        catch (RuntimeException unreachable) {
            return false;
        }
    }

    static String describe(ReactiveRedisConnectionFactory connectionFactory) {
        if (connectionFactory instanceof LettuceConnectionFactory lettuce) {
            return lettuce.getHostName() + ":" + lettuce.getPort();
        }
        return connectionFactory.getClass().getSimpleName();
    }
}
