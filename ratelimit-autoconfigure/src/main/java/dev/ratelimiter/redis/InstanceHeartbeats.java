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
        this.loop = new PeriodicTask("Sending the instance heartbeat", Duration.ZERO, interval, () -> beat(false));
    }

    @Override
    public int count() {
        return count;
    }

    /** Whether the count comes from Redis (false: the expected count, Redis has not answered yet). */
    public boolean fromStore() {
        return answered;
    }

    /** Sends a heartbeat now and then every interval, without waiting for any of them. */
    public void start() {
        loop.start();
    }

    /** Stops beating and leaves the count at once, so that the others' fair share grows without waiting. */
    public void stop() {
        loop.stop();
        beat(true).block(Duration.ofSeconds(1));
    }

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
