package dev.ratelimiter.autoconfigure;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** Where the application's Redis is, as Spring Boot configured it. */
final class RedisLocation {

    private RedisLocation() {
    }

    /** Where Redis is, as configured, for log lines. */
    static String describe(LettuceConnectionFactory connectionFactory) {
        RedisClusterConfiguration cluster = connectionFactory.getClusterConfiguration();
        if (connectionFactory.isClusterAware() && cluster != null) {
            return "cluster " + cluster.getClusterNodes();
        }
        RedisSentinelConfiguration sentinel = connectionFactory.getSentinelConfiguration();
        if (connectionFactory.isRedisSentinelAware() && sentinel != null) {
            return "sentinel master " + sentinel.getMaster().getName() + " via " + sentinel.getSentinels();
        }
        return connectionFactory.getHostName() + ":" + connectionFactory.getPort();
    }
}
