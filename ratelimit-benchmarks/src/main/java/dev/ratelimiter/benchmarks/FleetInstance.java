package dev.ratelimiter.benchmarks;

import java.time.Duration;

import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.SettleLoop;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.redis.InstanceHeartbeats;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.redis.RedisFallbackCharges;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisRateLimitStore;
import dev.ratelimiter.redis.RedisSettleClient;
import dev.ratelimiter.redis.RedisWarmup;

/**
 * One simulated gateway: what the auto-configuration gives a gateway on Redis ({@code LimiterConnectionConfiguration},
 * {@code RedisStoreStackConfiguration}), without Spring — its own {@link LimiterConnection} (so its own settle
 * instance id and dispatch thread), the Redis store with its batching, the {@link StoreStack} around it, the settle
 * loop of its leases and its heartbeat. Only the settle client is wrapped, to count what it passes on.
 */
final class FleetInstance implements AutoCloseable {

    /** As {@code LimiterConnectionConfiguration.COMMAND_TIMEOUT}. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);
    /** As the default {@code ratelimit.store.reconnect-max-delay}. */
    private static final Duration RECONNECT_MAX_DELAY = Duration.ofSeconds(1);
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(30);

    private final LimiterConnection connection;
    private final InstanceHeartbeats heartbeats;
    private final StoreStack stack;
    private final SettleLoop settleLoop;

    private FleetInstance(LimiterConnection connection, InstanceHeartbeats heartbeats, StoreStack stack) {
        this.connection = connection;
        this.heartbeats = heartbeats;
        this.stack = stack;
        this.settleLoop = stack.settleLoop();
    }

    /** Connects, warms up as a gateway does before its first request, and starts the heartbeat and settle loop. */
    static FleetInstance start(FleetRedis redis, FleetOptions options, FleetTally tally) {
        LimiterConnection connection = new LimiterConnection(redis::client, redis.description(), COMMAND_TIMEOUT,
                RECONNECT_MAX_DELAY);
        connection.start();
        RedisKeys keys = new RedisKeys("rl");
        Duration maxWait = options.storeTimeout().plus(StoreStack.DEFAULT_QUEUE_ALLOWANCE);
        RedisRateLimitStore store = new RedisRateLimitStore(connection, keys, redis.cluster(),
                options.storeTimeout(), maxWait);
        if (!RedisWarmup.succeeds(store, connection, STARTUP_TIMEOUT)) {
            connection.close();
            throw new IllegalStateException("an instance could not reach " + redis.description());
        }
        InstanceHeartbeats heartbeats = new InstanceHeartbeats(connection, keys, options.heartbeatInterval(),
                options.instances());
        Duration interval = options.settleInterval();
        StoreStack stack = StoreStack.builder()
                .sharedStore(store)
                .settleClient(new CountingSettleClient(RedisSettleClient.settlingEvery(interval, connection, keys,
                        redis.cluster()), tally))
                .liveInstances(heartbeats)
                .metrics(tally)
                .timeout(options.storeTimeout())
                .maxWait(maxWait)
                .fallbackCharges(new RedisFallbackCharges(connection, keys, redis.cluster()))
                .settleInterval(interval)
                .settleMaxSilence(options.settleMaxSilence())
                .build();
        FleetInstance instance = new FleetInstance(connection, heartbeats, stack);
        heartbeats.start();
        instance.settleLoop.start();
        return instance;
    }

    /** The store this gateway decides with. */
    RateLimitStore store() {
        return stack.store();
    }

    /**
     * Beats again at once, so that this instance counts every instance started after it: a real fleet has been up
     * longer than one heartbeat interval, and an instance that counted itself alone would size its shares for one.
     */
    void recount() {
        leave();
        heartbeats.start();
    }

    /** Instances this one counts alive (its heartbeat's view). */
    int liveInstances() {
        return heartbeats.count();
    }

    /** Stops settling; what is in flight still completes. */
    void stopSettling() {
        settleLoop.stop();
    }

    @Override
    public void close() {
        settleLoop.stop();
        leave();
        connection.close();
    }

    private void leave() {
        try {
            heartbeats.stop();
        }
        catch (RuntimeException unanswered) {
            // Not answered within its second: the others stop counting this instance when its heartbeat expires.
            System.err.println("An instance's leave was not answered in time: " + unanswered);
        }
    }
}
