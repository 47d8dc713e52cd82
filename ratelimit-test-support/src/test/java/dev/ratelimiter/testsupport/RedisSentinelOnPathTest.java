package dev.ratelimiter.testsupport;

/** {@link RedisSentinel} with {@code redis-server} from PATH. */
class RedisSentinelOnPathTest extends RedisSentinelContract {

    @Override
    String kind() {
        return "path";
    }
}
