package dev.ratelimiter.testsupport;

/** {@link RedisCluster} with {@code redis-server} from PATH (7.x on CI machines). */
class RedisClusterOnPathTest extends RedisClusterContract {

    @Override
    String kind() {
        return "path";
    }
}
