package dev.ratelimiter.autoconfigure.store;

import dev.ratelimiter.autoconfigure.StoreProperties;
import dev.ratelimiter.core.InvalidLimitException;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** Where the application's Redis is, as Spring Boot configured it. */
public final class RedisLocation {

    private RedisLocation() {
    }

    /**
     * Whether the limiter's scripts must each keep to one hash slot: as {@code topology} says, or on auto as the
     * connection is made. Standalone is refused on a cluster connection: Lettuce sends each script to the node of its
     * first key, and Redis refuses a script whose keys span slots.
     */
    public static boolean splitBySlot(LettuceConnectionFactory connectionFactory,
            StoreProperties.RedisTopology topology) {
        boolean clusterAware = connectionFactory.isClusterAware();
        if (topology == StoreProperties.RedisTopology.STANDALONE && clusterAware) {
            throw new InvalidLimitException("ratelimit.store.redis-topology", "ratelimit.store.redis-topology is "
                    + "standalone, but Redis is configured as a cluster (spring.data.redis.cluster.nodes): scripts "
                    + "that touch several hash slots would be refused. Set it to cluster or auto, or configure a "
                    + "single Redis (spring.data.redis.url or host).");
        }
        return topology == StoreProperties.RedisTopology.CLUSTER
                || topology == StoreProperties.RedisTopology.AUTO && clusterAware;
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
