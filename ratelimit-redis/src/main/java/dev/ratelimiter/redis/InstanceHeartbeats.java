package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.UUID;

import dev.ratelimiter.core.Background;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.PeriodicTask;
import io.lettuce.core.ScriptOutputType;
import reactor.core.publisher.Mono;

/**
 * Counts the gateway instances alive: each sends a heartbeat to {@code <prefix>:{instances}} every
 * {@code interval}, and an instance whose last heartbeat is older than three intervals no longer counts. The last
 * count seen is kept when Redis is gone — exactly when the fallback needs it.
 *
 * <p>Until Redis has answered once, the count is {@code expected}: an instance started during an outage has seen no
 * one, and counting itself alone would let it allow a whole limit by itself.
 */
public final class InstanceHeartbeats implements LiveInstances {

    private static final long FIRST_COUNT_WAIT_MILLIS = 2_000;

    private final LimiterConnection redis;
    private final String[] key;
    private final String instanceId = UUID.randomUUID().toString();
    private final Duration interval;
    private volatile int count;
    private volatile boolean answered;
    private final PeriodicTask loop;

    public InstanceHeartbeats(LimiterConnection redis, RedisKeys keys, Duration interval, int expected) {
        this.redis = redis;
        this.key = new String[] { keys.prefix() + ":{instances}" };
        this.interval = interval;
        this.count = Math.max(1, expected);
        this.loop = new PeriodicTask("Sending the instance heartbeat", interval, interval, () -> beat(false));
    }

    @Override
    public int count() {
        return count;
    }

    /** Whether the count comes from Redis (false: the expected count, Redis has not answered yet). */
    public boolean fromStore() {
        return answered;
    }

    /**
     * Sends a heartbeat now and waits for its count (at most {@value #FIRST_COUNT_WAIT_MILLIS} ms, and only when the
     * connection is open): an instance starting beside others must not decide its first requests as if alone. Then one
     * every interval, without waiting for any of them.
     */
    public void start() {
        if (redis.connected()) {
            try {
                beat(false).block(Duration.ofMillis(FIRST_COUNT_WAIT_MILLIS));
            }
            catch (RuntimeException notInTime) {
                // counted at the next beat; until then the expected count stands
            }
        }
        loop.start();
    }

    /**
     * Stops beating and leaves the count at once, so that the others' fair share grows without waiting. Waits at most
     * {@value #LEAVE_WAIT_MILLIS} ms for Redis and never fails: a Redis too slow to hear the leave lets the heartbeat
     * expire instead (three intervals), and a shutdown must not fail for it.
     */
    public void stop() {
        loop.stop();
        beat(true).timeout(Duration.ofMillis(LEAVE_WAIT_MILLIS), Background.scheduler())
                .onErrorResume(slow -> Mono.empty()).block();
    }

    private static final long LEAVE_WAIT_MILLIS = 1_000;

    private Mono<Long> beat(boolean leave) {
        String ttl = String.valueOf(interval.multipliedBy(3).toMillis());
        return Replies.of(() -> redis.<Long>script(LimiterScript.HEARTBEAT, ScriptOutputType.INTEGER, key,
                        instanceId, ttl, leave ? "1" : "0"))
                .timeout(interval, Background.scheduler())
                .doOnNext(alive -> {
                    count = (int) Math.max(1, alive);
                    answered = true;
                })
                .onErrorResume(unreachable -> Mono.empty());
    }
}
