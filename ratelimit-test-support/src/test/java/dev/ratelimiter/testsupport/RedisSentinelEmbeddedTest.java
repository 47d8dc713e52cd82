package dev.ratelimiter.testsupport;

/** {@link RedisSentinel} with the embedded-redis binary run as {@code redis-server <conf> --sentinel}. */
class RedisSentinelEmbeddedTest extends RedisSentinelContract {

    @Override
    String kind() {
        return "embedded";
    }
}
