package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import dev.ratelimiter.core.LiveInstances;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Counts the gateway instances alive: each sends a heartbeat to {@code <prefix>:{instances}} every
 * {@code interval}, and an instance whose last heartbeat is older than three intervals no longer counts. The last
 * count seen is kept when Redis is gone — exactly when the fallback needs it.
 */
public final class InstanceHeartbeats implements LiveInstances {

    private final ReactiveStringRedisTemplate redis;
    private final RedisScript<Long> script;
    private final List<String> key;
    private final String instanceId;
    private final Duration interval;
    private volatile int count = 1;
    private Disposable loop;

    public InstanceHeartbeats(ReactiveStringRedisTemplate redis, RedisKeys keys, Duration interval) {
        this.redis = redis;
        this.script = RedisScript.of(new ClassPathResource("META-INF/scripts/ratelimit/heartbeat.lua"), Long.class);
        this.key = List.of(keys.prefix() + ":{instances}");
        this.instanceId = UUID.randomUUID().toString();
        this.interval = interval;
    }

    @Override
    public int count() {
        return count;
    }

    /** Sends a heartbeat now and then every interval, without waiting for any of them. */
    public synchronized void start() {
        loop = Flux.interval(Duration.ZERO, interval)
                .onBackpressureDrop()
                .concatMap(tick -> beat(false))
                .subscribe();
    }

    /** Stops beating and leaves the count at once, so that the others' fair share grows without waiting. */
    public synchronized void stop() {
        if (loop != null) {
            loop.dispose();
            loop = null;
        }
        beat(true).block(Duration.ofSeconds(1));
    }

    private Mono<Long> beat(boolean leave) {
        String ttl = String.valueOf(interval.multipliedBy(3).toMillis());
        return Mono.defer(() -> redis.execute(script, key, List.of(instanceId, ttl, leave ? "1" : "0")).next())
                .timeout(interval)
                .doOnNext(alive -> count = (int) Math.max(1, alive))
                .onErrorResume(unreachable -> Mono.empty());
    }
}
