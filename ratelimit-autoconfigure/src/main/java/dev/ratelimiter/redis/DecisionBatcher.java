package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimiter.core.StoreTimeoutException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;

/**
 * Sends the decisions that are waiting together as one {@link LimiterScript#RATE_LIMIT} call: the script decides the
 * requests one after the other, each all or nothing and each seeing what the earlier ones spent, exactly as separate
 * calls would, at a fraction of the cost (one call's overhead in Redis, one write, one reply).
 *
 * <p>Nothing waits to be batched: a decision is handed to the dispatch thread at once, and whatever else arrived by
 * the time that thread takes it goes with it. Idle, every call carries one request; under load, calls carry what
 * arrived while the previous one was being written. On Redis Cluster a call can only touch one slot, so requests are
 * grouped by their slot.
 */
final class DecisionBatcher {

    /** Most buckets per call: a script runs alone in Redis, and the exact decisions queued behind it wait. */
    static final int MAX_KEYS = 128;

    private static final String SLACK = Long.toString(RedisRateLimitStore.TTL_SLACK_MILLIS);

    private final LimiterConnection redis;
    private final boolean bySlot;
    private final Duration timeout;
    private final long maxWaitNanos;
    /** Redis's clock: one per hash slot on Redis Cluster (the nodes' clocks differ), else one. */
    private final StoreClock clock = new StoreClock();
    private final Map<Integer, StoreClock> slotClocks = new ConcurrentHashMap<>();
    private final Queue<Pending> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean flushQueued = new AtomicBoolean();

    /**
     * @param timeout how long Redis may stay silent once a call is written (see {@link WireTimedCommand})
     * @param maxWait the longest a decision waits in all: a call Redis runs later than that after it was made is stale
     */
    DecisionBatcher(LimiterConnection redis, boolean bySlot, Duration timeout, Duration maxWait) {
        this.redis = redis;
        this.bySlot = bySlot;
        this.timeout = timeout;
        this.maxWaitNanos = maxWait.toNanos();
    }

    /** One request's decision: its keys, and its part of the arguments (its check count, then 5 per check). */
    private record Pending(String[] keys, String[] arguments, CompletableFuture<List<Long>> reply) {
    }

    /** Queues one request's checks; completes with its part of the reply (allowed, then 4 numbers per check). */
    CompletableFuture<List<Long>> decide(String[] keys, String[] arguments) {
        if (!redis.connected()) {
            return CompletableFuture.failedFuture(new LimiterConnection.NotConnectedException(redis.description(),
                    redis.lastFailure()));
        }
        Pending request = new Pending(keys, arguments, new CompletableFuture<>());
        pending.offer(request);
        if (flushQueued.compareAndSet(false, true)) {
            redis.onDispatchThread(this::flush);
        }
        return request.reply;
    }

    /** On the dispatch thread: sends everything waiting, in calls of at most {@value #MAX_KEYS} buckets. */
    private void flush() {
        // Cleared before draining: a decision queued from now on either is drained here or queues the next flush.
        flushQueued.set(false);
        List<Pending> batch = new ArrayList<>();
        for (Pending request = pending.poll(); request != null; request = pending.poll()) {
            batch.add(request);
        }
        if (batch.isEmpty()) {
            return;
        }
        try {
            if (!bySlot) {
                send(batch);
                return;
            }
            Map<Integer, List<Pending>> bySlots = new LinkedHashMap<>();
            for (Pending request : batch) {
                bySlots.computeIfAbsent(SlotHash.getSlot(request.keys[0]), slot -> new ArrayList<>()).add(request);
            }
            bySlots.values().forEach(this::send);
        }
        catch (RuntimeException ex) {
            // Whatever went wrong, no decision may be left waiting: the ones not sent fail now (a sent one has its
            // reply already, or its timeout running, and a second answer changes nothing).
            batch.forEach(request -> request.reply.completeExceptionally(ex));
        }
    }

    private void send(List<Pending> requests) {
        int from = 0;
        while (from < requests.size()) {
            int keys = 0;
            int to = from;
            while (to < requests.size() && (to == from || keys + requests.get(to).keys.length <= MAX_KEYS)) {
                keys += requests.get(to).keys.length;
                to++;
            }
            call(requests.subList(from, to), keys);
            from = to;
        }
    }

    private void call(List<Pending> requests, int keyCount) {
        String[] keys = new String[keyCount];
        int argumentCount = 4;
        for (Pending request : requests) {
            argumentCount += request.arguments.length;
        }
        String[] arguments = new String[argumentCount];
        arguments[0] = SLACK;
        arguments[1] = "0";
        // When Redis must not run it any more, written when the call is (StaleAfterCodec).
        arguments[2] = StaleAfterCodec.MARKER;
        arguments[3] = Integer.toString(requests.size());
        int key = 0;
        int argument = 4;
        for (Pending request : requests) {
            System.arraycopy(request.keys, 0, keys, key, request.keys.length);
            key += request.keys.length;
            System.arraycopy(request.arguments, 0, arguments, argument, request.arguments.length);
            argument += request.arguments.length;
        }
        List<Pending> sent = List.copyOf(requests);
        StoreClock storeClock = bySlot ? slotClocks.computeIfAbsent(SlotHash.getSlot(keys[0]), s -> new StoreClock())
                : clock;
        // The first of these requests was asked for before this call was made: its longest wait ends no later.
        redis.<List<Long>>scriptHere(LimiterScript.RATE_LIMIT, ScriptOutputType.MULTI, keys, arguments,
                new WireTimedCommand.Timing(timeout.toNanos(), storeClock, System.nanoTime() + maxWaitNanos))
                .whenComplete((reply, failure) -> answer(sent, reply, failure, storeClock));
    }

    /** Hands each request its part of the reply, or the failure. */
    private static void answer(List<Pending> requests, List<Long> reply, Throwable failure, StoreClock storeClock) {
        if (failure != null) {
            requests.forEach(request -> request.reply.completeExceptionally(failure));
            return;
        }
        if (!reply.isEmpty()) {
            storeClock.read(reply.get(reply.size() - 1), System.nanoTime());
        }
        if (reply.size() == 1) {
            StoreTimeoutException stale = new StoreTimeoutException("Redis ran the call too late to be waited for; "
                    + "it decided and wrote nothing");
            requests.forEach(request -> request.reply.completeExceptionally(stale));
            return;
        }
        int at = 0;
        for (Pending request : requests) {
            int length = 1 + request.keys.length * 4;
            if (at + length > reply.size() - 1) {
                request.reply.completeExceptionally(new IllegalStateException("rate limit script returned "
                        + reply.size() + " numbers for " + requests.size() + " requests"));
                continue;
            }
            request.reply.complete(reply.subList(at, at + length));
            at += length;
        }
    }
}
