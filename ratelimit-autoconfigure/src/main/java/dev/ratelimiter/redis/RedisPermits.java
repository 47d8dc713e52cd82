package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ConcurrencyLimit;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The concurrency permits this instance holds in Redis: gives them back when their requests end and renews their
 * leases while the requests run, so a lease can be short (a dead instance's permits free soon) while a request may
 * take longer than one lease.
 *
 * <p>Each permit is renewed once a third of its lease has passed since it was taken or last renewed: two renewals
 * can be missed (a long GC pause, a slow Redis) before a running request loses its permit. Renewals and releases of
 * many permits go in one script call per hash slot.
 */
public final class RedisPermits {

    public static final String SCRIPT_LOCATION = "META-INF/scripts/ratelimit/release_permits.lua";

    private final ReactiveStringRedisTemplate redis;
    private final RedisScript<Long> script;
    private final RedisKeys keys;
    private final boolean splitBySlot;
    private final LongSupplier nanoClock;
    private final Map<Held, Long> renewedAt = new ConcurrentHashMap<>();

    public RedisPermits(ReactiveStringRedisTemplate redis, RedisKeys keys, boolean splitBySlot, LongSupplier nanoClock) {
        this.redis = redis;
        this.script = RedisScript.of(new ClassPathResource(SCRIPT_LOCATION), Long.class);
        this.keys = keys;
        this.splitBySlot = splitBySlot;
        this.nanoClock = nanoClock;
    }

    /** Records permits the store just granted, for renewal until they are released. */
    void taken(List<Check> permits) {
        long now = nanoClock.getAsLong();
        for (Check check : permits) {
            renewedAt.put(Held.of(check), now);
        }
    }

    /** Gives permits back. Forgets them first: a permit whose release fails is no longer renewed, so its lease ends. */
    public Mono<Void> release(List<Check> permits) {
        List<Held> held = new ArrayList<>(permits.size());
        for (Check check : permits) {
            Held permit = Held.of(check);
            renewedAt.remove(permit);
            held.add(permit);
        }
        return run("release", held).then();
    }

    /** Renews every permit a third of whose lease has passed; returns how many Redis still held. */
    public Mono<Long> renewDue() {
        long now = nanoClock.getAsLong();
        List<Held> due = new ArrayList<>();
        renewedAt.forEach((permit, at) -> {
            if (now - at >= permit.lease.toNanos() / 3) {
                due.add(permit);
            }
        });
        if (due.isEmpty()) {
            return Mono.just(0L);
        }
        return run("renew", due).doOnNext(renewed -> due.forEach(permit -> renewedAt.replace(permit, now)));
    }

    /** Permits this instance holds in Redis right now. */
    public int held() {
        return renewedAt.size();
    }

    private Mono<Long> run(String action, List<Held> permits) {
        if (permits.isEmpty()) {
            return Mono.just(0L);
        }
        if (!splitBySlot) {
            return call(action, permits);
        }
        Map<String, List<Held>> byPartition = new LinkedHashMap<>();
        permits.forEach(permit -> byPartition.computeIfAbsent(permit.bucket.partition(), p -> new ArrayList<>())
                .add(permit));
        return Flux.fromIterable(byPartition.values()).flatMap(group -> call(action, group)).reduce(0L, Long::sum);
    }

    private Mono<Long> call(String action, List<Held> permits) {
        List<String> keyNames = new ArrayList<>(permits.size());
        List<String> arguments = new ArrayList<>(2 + permits.size() * 2);
        arguments.add(action);
        arguments.add(String.valueOf(RedisRateLimitStore.TTL_SLACK_MILLIS));
        for (Held permit : permits) {
            keyNames.add(keys.bucket(permit.bucket));
            arguments.add(permit.id);
            arguments.add(String.valueOf(permit.lease.toMillis()));
        }
        return Mono.defer(() -> redis.execute(script, keyNames, arguments).next()).defaultIfEmpty(0L);
    }

    /** One permit: the bucket it is in, its id, its lease. */
    private record Held(BucketKey bucket, String id, Duration lease) {

        static Held of(Check check) {
            return new Held(check.bucket(), check.permit(), ((ConcurrencyLimit) check.rule().limit()).lease());
        }
    }
}
