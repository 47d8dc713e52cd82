package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ConcurrencyLimit;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
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
    private final RedisScript<List<Long>> script;
    private final RedisKeys keys;
    private final boolean splitBySlot;
    private final LongSupplier nanoClock;
    private final Map<Held, Long> renewedAt = new ConcurrentHashMap<>();
    /** Permits given up on before their grant was seen: a grant landing after that must not be renewed. */
    private final Cache<String, Boolean> abandoned = Caffeine.newBuilder().maximumSize(100_000)
            .expireAfterWrite(Duration.ofMinutes(1)).build();

    public RedisPermits(ReactiveStringRedisTemplate redis, RedisKeys keys, boolean splitBySlot, LongSupplier nanoClock) {
        this.redis = redis;
        this.script = permitScript();
        this.keys = keys;
        this.splitBySlot = splitBySlot;
        this.nanoClock = nanoClock;
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private static RedisScript<List<Long>> permitScript() {
        return (RedisScript) RedisScript.of(new ClassPathResource(SCRIPT_LOCATION), List.class);
    }

    /** Records permits the store just granted, for renewal until they are released. */
    void taken(List<Check> permits) {
        long now = nanoClock.getAsLong();
        for (Check check : permits) {
            if (abandoned.getIfPresent(check.permit()) == null) {
                renewedAt.put(Held.of(check), now);
            }
        }
    }

    /**
     * Gives back permits whose grant was never seen (the request was cancelled, or the call timed out, while the
     * script ran): they may be granted after this call is sent, so a grant landing later is not recorded.
     */
    public Mono<Void> abandon(List<Check> permits) {
        permits.forEach(check -> abandoned.put(check.permit(), Boolean.TRUE));
        return release(permits);
    }

    /** Gives permits back. Forgets them first: a permit whose release fails is no longer renewed, so its lease ends. */
    public Mono<Void> release(List<Check> permits) {
        List<Held> held = new ArrayList<>(permits.size());
        for (Check check : permits) {
            Held permit = Held.of(check);
            renewedAt.remove(permit);
            held.add(permit);
        }
        return run("release", held, results -> { }).then();
    }

    /**
     * Renews every permit a third of whose lease has passed; returns how many Redis still held. One Redis no longer
     * holds (its lease ran out during a long pause, or it was given back while its grant was landing) is forgotten.
     */
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
        return run("renew", due, results -> results.forEach((permit, held) -> {
            if (held) {
                renewedAt.replace(permit, now);
            }
            else {
                renewedAt.remove(permit);
            }
        }));
    }

    /** Permits this instance holds in Redis right now. */
    public int held() {
        return renewedAt.size();
    }

    private Mono<Long> run(String action, List<Held> permits, Consumer<Map<Held, Boolean>> onResults) {
        if (permits.isEmpty()) {
            return Mono.just(0L);
        }
        if (!splitBySlot) {
            return call(action, permits, onResults);
        }
        Map<String, List<Held>> byPartition = new LinkedHashMap<>();
        permits.forEach(permit -> byPartition.computeIfAbsent(permit.bucket.partition(), p -> new ArrayList<>())
                .add(permit));
        return Flux.fromIterable(byPartition.values()).flatMap(group -> call(action, group, onResults))
                .reduce(0L, Long::sum);
    }

    private Mono<Long> call(String action, List<Held> permits, Consumer<Map<Held, Boolean>> onResults) {
        List<String> keyNames = new ArrayList<>(permits.size());
        List<String> arguments = new ArrayList<>(2 + permits.size() * 2);
        arguments.add(action);
        arguments.add(String.valueOf(RedisRateLimitStore.TTL_SLACK_MILLIS));
        for (Held permit : permits) {
            keyNames.add(keys.bucket(permit.bucket));
            arguments.add(permit.id);
            arguments.add(String.valueOf(permit.lease.toMillis()));
        }
        return Mono.defer(() -> redis.execute(script, keyNames, arguments).next()).map(flags -> {
            Map<Held, Boolean> results = new LinkedHashMap<>();
            long done = 0;
            for (int i = 0; i < permits.size() && i < flags.size(); i++) {
                results.put(permits.get(i), flags.get(i) == 1L);
                done += flags.get(i);
            }
            onResults.accept(results);
            return done;
        });
    }

    /** One permit: the bucket it is in, its id, its lease. */
    private record Held(BucketKey bucket, String id, Duration lease) {

        static Held of(Check check) {
            return new Held(check.bucket(), check.permit(), ((ConcurrencyLimit) check.rule().limit()).lease());
        }
    }
}
