package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.core.Background;
import dev.ratelimiter.core.StoreTimeoutException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;

/**
 * Sends the decisions that are waiting together as one {@link LimiterScript#RATE_LIMIT} call: the script decides the
 * requests one after the other, each all or nothing and each seeing what the earlier ones spent, exactly as separate
 * calls would, at a fraction of the cost (one call's overhead in Redis, one write, one reply).
 *
 * <p>Nothing waits for a timer: a decision is handed to the dispatch thread at once, and whatever else arrived by the
 * time that thread takes it goes with it. Idle, every call carries one request. Under load, at most
 * {@code callsInFlight} calls are out at once (standalone and Sentinel): the decisions that arrive meanwhile wait for
 * a reply and go together in the next call — the batch grows with the load by itself, and so does what one call's
 * overhead (a system call and a wake-up on each side, ~14 µs of Redis CPU and ~20 µs of the gateway's, measured by
 * {@code ExactStoreCost}) is shared by. A call out for two timeouts no longer holds anyone back, and nobody waits
 * while the connection is down. Each call's staleness deadline is its oldest request's ask plus the longest wait, so
 * that a request that waited for a reply is never decided by Redis after the gateway gave up on it. On Redis
 * Cluster a call can only touch one slot, so requests are grouped by their slot, and calls to different primaries are
 * not held back.
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
    private final int callsInFlight;
    /** Calls made and not answered yet; one holds the others back only while it is younger than {@link #holdNanos}. */
    private final Set<OutCall> out = ConcurrentHashMap.newKeySet();
    private final long holdNanos;
    private final AtomicBoolean recheckArmed = new AtomicBoolean();

    /**
     * @param timeout how long Redis may stay silent once a call is written (see {@link WireTimedCommand})
     * @param maxWait the longest a decision waits in all: a call Redis runs later than that after it was made is stale
     */
    DecisionBatcher(LimiterConnection redis, boolean bySlot, Duration timeout, Duration maxWait) {
        this(redis, bySlot, timeout, maxWait, 0);
    }

    /**
     * @param callsInFlight the most calls out at once before decisions wait for a reply to go together (standalone
     * and Sentinel); 0 for no limit (every flush sends at once)
     */
    DecisionBatcher(LimiterConnection redis, boolean bySlot, Duration timeout, Duration maxWait, int callsInFlight) {
        this.redis = redis;
        this.bySlot = bySlot;
        this.timeout = timeout;
        this.maxWaitNanos = maxWait.toNanos();
        this.callsInFlight = bySlot ? 0 : Math.max(0, callsInFlight);
        // A healthy call is answered within the timeout of its write; one out for twice that (never written, its
        // connection lost with it, or Redis silent) no longer holds the decisions behind it.
        this.holdNanos = timeout.toNanos() * 2;
    }

    /** One call out, by identity. */
    private static final class OutCall {

        final long madeNanos = System.nanoTime();
    }

    /**
     * One request's decision: its keys, its part of the arguments (its check count, then 5 per check), and when it was
     * asked.
     */
    private record Pending(String[] keys, String[] arguments, CompletableFuture<List<Long>> reply, long askedNanos) {
    }

    /**
     * Redis's time now as this JVM last saw it (microseconds) — of the slot {@code key} lives in on Redis Cluster —
     * or this JVM's wall clock before Redis has answered: what a calendar quota's period is computed from.
     */
    long storeMicros(String key) {
        StoreClock storeClock = bySlot ? slotClocks.get(SlotHash.getSlot(key)) : clock;
        long wall = System.currentTimeMillis() * 1_000L;
        return storeClock == null ? wall : storeClock.now(System.nanoTime(), wall);
    }

    /** Queues one request's checks; completes with its part of the reply (allowed, then 4 numbers per check). */
    CompletableFuture<List<Long>> decide(String[] keys, String[] arguments) {
        if (!redis.connected()) {
            return CompletableFuture.failedFuture(new LimiterConnection.NotConnectedException(redis.description(),
                    redis.lastFailure()));
        }
        Pending request = new Pending(keys, arguments, new CompletableFuture<>(), System.nanoTime());
        pending.offer(request);
        flushSoon();
        return request.reply;
    }

    private void flushSoon() {
        if (flushQueued.compareAndSet(false, true)) {
            redis.onDispatchThread(this::flush);
        }
    }

    /** On the dispatch thread: sends everything waiting, in calls of at most {@value #MAX_KEYS} buckets. */
    private void flush() {
        // Cleared before draining: a decision queued from now on either is drained here or queues the next flush.
        flushQueued.set(false);
        if (holding()) {
            // The next reply flushes what waits (it looks after removing its call: nothing is left behind). Should no
            // reply come in time, a look once the calls out stop holding sends anyway.
            if (recheckArmed.compareAndSet(false, true)) {
                Background.scheduler().schedule(() -> {
                    recheckArmed.set(false);
                    flushSoon();
                }, holdNanos, TimeUnit.NANOSECONDS);
            }
            return;
        }
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
        // The first of these requests was asked for first (the queue keeps their order): its longest wait ends first.
        CompletableFuture<List<Long>> call;
        OutCall made = new OutCall();
        out.add(made);
        try {
            call = redis.scriptHere(LimiterScript.RATE_LIMIT, ScriptOutputType.MULTI, keys, arguments,
                    new WireTimedCommand.Timing(timeout.toNanos(), storeClock, requests.get(0).askedNanos
                            + maxWaitNanos));
        }
        catch (RuntimeException ex) {
            out.remove(made);
            throw ex;
        }
        call.whenComplete((reply, failure) -> {
            out.remove(made);
            if (!pending.isEmpty()) {
                flushSoon();
            }
            answer(sent, reply, failure, storeClock);
        });
    }

    /**
     * Whether decisions wait for a reply before they go out: as many calls are out as allowed, each younger than
     * {@link #holdNanos}, and the connection is open (closed, a call fails at once, sending nothing: nobody waits for
     * that).
     */
    private boolean holding() {
        if (callsInFlight == 0 || out.size() < callsInFlight || !redis.connected()) {
            return false;
        }
        long now = System.nanoTime();
        int young = 0;
        for (OutCall call : out) {
            if (now - call.madeNanos < holdNanos) {
                young++;
            }
        }
        return young >= callsInFlight;
    }

    /** For tests: Redis's clock as this batcher sees it (standalone and Sentinel). */
    StoreClock clock() {
        return clock;
    }

    /** For tests: a call that is never answered, as one Lettuce buffered while its connection was lost. */
    void callNeverAnswered() {
        out.add(new OutCall());
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
