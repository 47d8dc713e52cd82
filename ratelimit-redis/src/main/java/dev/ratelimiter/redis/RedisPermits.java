package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.RequestPermits;
import io.lettuce.core.ScriptOutputType;
import reactor.core.publisher.Mono;

/**
 * The concurrency permits this instance holds in Redis: renews their leases while their requests run, and gives them
 * back when the requests end — retrying a give-back that could not reach Redis until it does or the lease is over.
 *
 * <p>Each permit is renewed once a third of its lease has passed since it was taken or last renewed: two renewals
 * can be missed (a long GC pause, a slow Redis) before a running request loses its permit. A lease can therefore be
 * short (a dead instance's permits free soon) while a request may take far longer than one lease.
 *
 * <p>A permit is renewed only while its request holds it ({@link RequestPermits}): once given back it is never
 * renewed again, whatever happened to the give-back, so a permit that could not be given back ends with its lease.
 * Renewals and give-backs of many permits go in one script call per hash slot.
 */
public final class RedisPermits implements RequestPermits.Owner {

    /** Give-backs waiting for Redis beyond this many are left to their leases (an outage with a flood of requests). */
    static final int MAX_PENDING = 100_000;

    private final LimiterConnection redis;
    private final RedisKeys keys;
    private final boolean splitBySlot;
    private final LongSupplier nanoClock;
    private final Map<Held, Long> renewedAt = new ConcurrentHashMap<>();
    /** Give-backs that failed, with when their lease is over at the latest (nanos): retried until then. */
    private final Map<Held, Long> pending = new ConcurrentHashMap<>();

    public RedisPermits(LimiterConnection redis, RedisKeys keys, boolean splitBySlot, LongSupplier nanoClock) {
        this.redis = redis;
        this.keys = keys;
        this.splitBySlot = splitBySlot;
        this.nanoClock = nanoClock;
    }

    /** Starts renewing permits Redis granted (or may have granted) to a request still running. */
    @Override
    public void hold(List<Check> permits) {
        long now = nanoClock.getAsLong();
        for (Check check : permits) {
            renewedAt.put(Held.of(check), now);
        }
    }

    /** Stops renewing the permits and gives them back (a permit Redis does not hold is ignored there). */
    @Override
    public void giveBack(List<Check> permits) {
        List<Held> held = new ArrayList<>(permits.size());
        long now = nanoClock.getAsLong();
        for (Check check : permits) {
            Held permit = Held.of(check);
            Long renewed = renewedAt.remove(permit);
            held.add(permit);
            // Not given back after this, the permit is gone from Redis anyway: its lease ends without renewals.
            pending.putIfAbsent(permit, (renewed != null ? renewed : now) + permit.lease.toNanos());
        }
        run("release", held).whenComplete((done, failure) -> {
            if (failure == null) {
                held.forEach(pending::remove);
            }
            else {
                trimPending();
            }
        });
    }

    /**
     * Renews every permit a third of whose lease has passed, and retries the give-backs that failed; completes with
     * how many permits Redis still held. A permit Redis no longer holds (its lease ran out during a long pause) is
     * forgotten.
     */
    public Mono<Long> renewDue() {
        long now = nanoClock.getAsLong();
        List<Held> due = new ArrayList<>();
        renewedAt.forEach((permit, at) -> {
            if (now - at >= permit.lease.toNanos() / 3) {
                due.add(permit);
            }
        });
        retryGiveBacks(now);
        if (due.isEmpty()) {
            return Mono.just(0L);
        }
        return Replies.of(run("renew", due).thenApply(results -> {
            long stillHeld = 0;
            for (Map.Entry<Held, Boolean> result : results.entrySet()) {
                if (result.getValue()) {
                    stillHeld++;
                    renewedAt.replace(result.getKey(), now);
                }
                else {
                    renewedAt.remove(result.getKey());
                }
            }
            return stillHeld;
        }));
    }

    /** Permits this instance holds in Redis for requests still running (renewed while they run). */
    public int held() {
        return renewedAt.size();
    }

    /** Give-backs that failed and are being retried. */
    public int pendingGiveBacks() {
        return pending.size();
    }

    private void retryGiveBacks(long now) {
        if (pending.isEmpty()) {
            return;
        }
        List<Held> retry = new ArrayList<>();
        pending.forEach((permit, until) -> {
            if (now - until > 0) {
                pending.remove(permit, until);
            }
            else {
                retry.add(permit);
            }
        });
        if (!retry.isEmpty()) {
            run("release", retry).thenRun(() -> retry.forEach(pending::remove));
        }
    }

    private void trimPending() {
        if (pending.size() > MAX_PENDING) {
            pending.keySet().stream().limit(pending.size() - MAX_PENDING).toList().forEach(pending::remove);
        }
    }

    /** One call per hash slot; completes with, per permit, whether Redis held it. */
    private CompletableFuture<Map<Held, Boolean>> run(String action, List<Held> permits) {
        if (!splitBySlot) {
            return call(action, permits);
        }
        Map<String, List<Held>> byPartition = new LinkedHashMap<>();
        permits.forEach(permit -> byPartition.computeIfAbsent(permit.bucket.partition(), p -> new ArrayList<>())
                .add(permit));
        if (byPartition.size() == 1) {
            return call(action, permits);
        }
        List<CompletableFuture<Map<Held, Boolean>>> calls = byPartition.values().stream()
                .map(group -> call(action, group)).toList();
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).thenApply(all -> {
            Map<Held, Boolean> results = new LinkedHashMap<>();
            calls.forEach(call -> results.putAll(call.join()));
            return results;
        });
    }

    private CompletableFuture<Map<Held, Boolean>> call(String action, List<Held> permits) {
        String[] keyNames = new String[permits.size()];
        String[] arguments = new String[2 + permits.size() * 2];
        arguments[0] = action;
        arguments[1] = String.valueOf(RedisRateLimitStore.TTL_SLACK_MILLIS);
        for (int i = 0; i < permits.size(); i++) {
            Held permit = permits.get(i);
            keyNames[i] = keys.bucket(permit.bucket);
            arguments[2 + i * 2] = permit.id;
            arguments[3 + i * 2] = String.valueOf(permit.lease.toMillis());
        }
        return redis.<List<Long>>script(LimiterScript.PERMITS, ScriptOutputType.MULTI, keyNames, arguments)
                .thenApply(flags -> {
                    Map<Held, Boolean> results = new LinkedHashMap<>();
                    for (int i = 0; i < permits.size() && i < flags.size(); i++) {
                        results.put(permits.get(i), flags.get(i) == 1L);
                    }
                    return results;
                });
    }

    /** One permit: the bucket it is in, its id, its lease. */
    private record Held(BucketKey bucket, String id, Duration lease) {

        static Held of(Check check) {
            return new Held(check.bucket(), check.permit(), ((ConcurrencyLimit) check.rule().limit()).lease());
        }
    }
}
