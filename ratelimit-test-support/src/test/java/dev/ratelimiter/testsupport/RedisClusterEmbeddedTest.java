package dev.ratelimiter.testsupport;

/** {@link RedisCluster} with the embedded-redis binary (6.2): no ADDSLOTSRANGE, no cluster-port. */
class RedisClusterEmbeddedTest extends RedisClusterContract {

    @Override
    String kind() {
        return "embedded";
    }
}
