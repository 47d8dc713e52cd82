package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import reactor.core.publisher.Mono;

/**
 * Buckets in Redis: every check of a request in one {@link LimiterScript#RATE_LIMIT} call, one round trip, atomic —
 * shared with the other requests waiting at that moment ({@link DecisionBatcher}), each still all or nothing.
 *
 * <p>On Redis Cluster one script may only touch keys of one slot. With {@code splitBySlot}, checks are grouped by
 * their partition (hash tag) and each group is sent as its own script call, all at once: still one round trip of
 * wall time, but all-or-nothing holds within a group only. A client's own rules share its partition and stay
 * atomic together; a per-route cap in another slot may then spend a token for a request another group refused
 * (never the reverse: nothing is ever under-counted). A permit such a group granted is the request's like any other
 * and is given back when the refused request ends.
 *
 * <p>A calendar quota's count is kept per period ({@link QuotaPeriodKeys}): a request is sent the period holding
 * Redis's time as this JVM last saw it, and sent again for the right one when the script finds its own time outside
 * it (a call run just across a boundary).
 *
 * <p>Permits are reported to the request's {@link dev.ratelimiter.core.RequestPermits} from each call's own reply,
 * whenever it lands — also after the caller's timeout — and, when a call failed after it may have run, as possibly
 * granted, so that they are given back in any case.
 */
public final class RedisRateLimitStore implements RateLimitStore {

    /** Extra lifetime of a key beyond its state lifetime, so a key is not dropped a moment too early. */
    static final long TTL_SLACK_MILLIS = 1_000;

    private static final String[] SMALL_NUMBERS = new String[64];

    static {
        for (int i = 0; i < SMALL_NUMBERS.length; i++) {
            SMALL_NUMBERS[i] = Integer.toString(i);
        }
    }

    private final LimiterConnection redis;
    private final RedisKeys keys;
    private final boolean splitBySlot;
    private final RedisPermits permits;
    private final Map<Limit, String[]> limitArguments = new ConcurrentHashMap<>();
    private final QuotaPeriodKeys quotaPeriods = new QuotaPeriodKeys();
    private final DecisionBatcher batcher;

    /** With the default timeout and longest wait ({@link StoreStack#DEFAULT_TIMEOUT}, {@link StoreStack#DEFAULT_MAX_WAIT}). */
    public RedisRateLimitStore(LimiterConnection redis, RedisKeys keys, boolean splitBySlot) {
        this(redis, keys, splitBySlot, StoreStack.DEFAULT_TIMEOUT, StoreStack.DEFAULT_MAX_WAIT);
    }

    /** With the default longest wait for the timeout given: the timeout plus {@link StoreStack#DEFAULT_QUEUE_ALLOWANCE}. */
    public RedisRateLimitStore(LimiterConnection redis, RedisKeys keys, boolean splitBySlot, Duration timeout) {
        this(redis, keys, splitBySlot, timeout, timeout.plus(StoreStack.DEFAULT_QUEUE_ALLOWANCE));
    }

    /**
     * @param timeout how long Redis may stay silent once a decision's call is written: past it the call fails with
     * {@link dev.ratelimiter.core.StoreTimeoutException} (timed on the thread that reads the answer, see
     * {@link WireTimedCommand}), and Redis, told so with the call, no longer runs it
     * @param maxWait the longest a decision waits in all (the fail-safe store's backstop): a call Redis runs later than
     * that after it was made is stale too, however late it was written
     */
    public RedisRateLimitStore(LimiterConnection redis, RedisKeys keys, boolean splitBySlot, Duration timeout,
            Duration maxWait) {
        this(redis, keys, splitBySlot, timeout, maxWait, 0);
    }

    /**
     * @param callsInFlight the most decision calls out at once before decisions wait for a reply and go together
     * (standalone and Sentinel; see {@link DecisionBatcher}); 0 for no limit
     */
    public RedisRateLimitStore(LimiterConnection redis, RedisKeys keys, boolean splitBySlot, Duration timeout,
            Duration maxWait, int callsInFlight) {
        if (callsInFlight < 0) {
            throw new IllegalArgumentException("Calls in flight (ratelimit.store.calls-in-flight) must be 0 (no limit) "
                    + "or more, but it was " + callsInFlight);
        }
        this.redis = redis;
        this.keys = keys;
        this.splitBySlot = splitBySlot;
        this.permits = new RedisPermits(redis, keys, splitBySlot, System::nanoTime);
        this.batcher = new DecisionBatcher(redis, splitBySlot, timeout, maxWait, callsInFlight);
    }

    /** For tests: the batcher the decisions go through. */
    DecisionBatcher batcher() {
        return batcher;
    }

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        // A caller that stops waiting must not cancel the command: its reply reports the permits it took.
        return Replies.of(decide(checks));
    }

    private static String number(int value) {
        return value >= 0 && value < SMALL_NUMBERS.length ? SMALL_NUMBERS[value] : Integer.toString(value);
    }

    /**
     * A limit's three script arguments: the algorithm code {@code rate_limit.lua} (and {@code charge.lua}) branch on,
     * and two numbers. A new array each time: callers keep or change it.
     */
    static final Limit.Cases<String[]> SCRIPT_ARGUMENTS = new Limit.Cases<>() {

        @Override
        public String[] tokenBucket(TokenBucketLimit bucket) {
            return new String[] { "t", Long.toString(bucket.capacity()), Double.toString(bucket.tokensPerSecond()) };
        }

        @Override
        public String[] slidingWindow(SlidingWindowLimit window) {
            return new String[] { "w", Long.toString(window.limit()), Long.toString(window.window().toMillis()) };
        }

        @Override
        public String[] concurrency(ConcurrencyLimit concurrency) {
            return new String[] { "c", Long.toString(concurrency.maxInProgress()),
                    Long.toString(concurrency.lease().toMillis()) };
        }

        /** The period's bounds are not the limit's: {@link QuotaPeriodKeys} fills them in per call. */
        @Override
        public String[] calendarQuota(CalendarQuotaLimit quota) {
            return new String[] { "q", Long.toString(quota.limit()), "" };
        }
    };

    /**
     * How often a request of a calendar quota is sent again when the script found the store's time outside the period
     * it was sent (a call that landed just across a boundary): once is enough unless a second boundary passes between
     * two calls, or the store's clock jumps; past this the request fails and the fallback decides it.
     */
    static final int QUOTA_PERIOD_ATTEMPTS = 3;

    /** A limit's three script arguments ({@link #SCRIPT_ARGUMENTS}), formatted once: formatting a double costs. */
    private String[] argumentsOf(Limit limit) {
        String[] formatted = limitArguments.get(limit);
        if (formatted == null) {
            formatted = limit.match(SCRIPT_ARGUMENTS);
            if (limitArguments.size() < 10_000) {
                limitArguments.put(limit, formatted);
            }
        }
        return formatted;
    }

    /** The permits this store holds for requests of this instance, renewed while they run. */
    public RedisPermits permits() {
        return permits;
    }

    private CompletableFuture<Verdict> decide(List<Check> checks) {
        if (!splitBySlot) {
            return run(checks).thenApply(outcomes -> Verdict.evaluated(outcomes, Verdict.Source.STORE));
        }
        Map<String, List<Check>> byPartition = new LinkedHashMap<>();
        checks.forEach(check -> byPartition.computeIfAbsent(check.bucket().partition(), p -> new ArrayList<>())
                .add(check));
        if (byPartition.size() == 1) {
            return run(checks).thenApply(outcomes -> Verdict.evaluated(outcomes, Verdict.Source.STORE));
        }
        List<CompletableFuture<List<RuleOutcome>>> groups = byPartition.values().stream().map(this::run).toList();
        return CompletableFuture.allOf(groups.toArray(CompletableFuture[]::new)).thenApply(all -> {
            Map<Check, RuleOutcome> byCheck = new LinkedHashMap<>();
            groups.forEach(group -> group.join().forEach(outcome -> byCheck.put(outcome.check(), outcome)));
            return Verdict.evaluated(checks.stream().map(byCheck::get).toList(), Verdict.Source.STORE);
        });
    }

    private CompletableFuture<List<RuleOutcome>> run(List<Check> checks) {
        CompletableFuture<List<Long>> reply = send(checks, -1, 1);
        boolean takesPermits = false;
        for (Check check : checks) {
            takesPermits |= check.concurrency();
        }
        if (takesPermits) {
            // Reported before the verdict goes on, so that whoever sees the verdict sees the permits recorded.
            reply = reply.whenComplete((numbers, failure) -> reportPermits(checks, numbers, failure));
        }
        return reply.thenApply(numbers -> toOutcomes(numbers, checks));
    }

    /**
     * Sends one request's checks; a calendar quota's period is the one holding {@code storeMicros}, or (-1) Redis's
     * time as last seen. When the script finds its own time outside a quota's period (the call landed across a
     * boundary, or this JVM's view of Redis's clock was off), it wrote nothing of the request and answered its time:
     * the request is sent again for the period holding that time.
     */
    private CompletableFuture<List<Long>> send(List<Check> checks, long storeMicros, int attempt) {
        String[] keyNames = new String[checks.size()];
        // This request's part of a script call: its number of checks, then five arguments per check.
        String[] arguments = new String[1 + checks.size() * 5];
        arguments[0] = number(checks.size());
        boolean quotas = false;
        for (int i = 0; i < checks.size(); i++) {
            Check check = checks.get(i);
            keyNames[i] = keys.bucket(check.bucket());
            int at = 1 + i * 5;
            Limit rule = check.rule().limit();
            String[] limit = argumentsOf(rule);
            arguments[at] = limit[0];
            arguments[at + 1] = limit[1];
            arguments[at + 2] = limit[2];
            CalendarQuotaLimit quota = "q".equals(limit[0]) ? QuotaPeriodKeys.quotaOf(rule) : null;
            if (quota != null) {
                quotas = true;
                QuotaPeriodKeys.Period period = quotaPeriods.at(quota,
                        storeMicros >= 0 ? storeMicros : batcher.storeMicros(keyNames[i]));
                keyNames[i] = keyNames[i] + period.suffix();
                arguments[at + 2] = period.bounds();
            }
            if (check.concurrency()) {
                arguments[at + 3] = check.permit();
            }
            else {
                arguments[at + 3] = number(check.cost());
            }
            arguments[at + 4] = check.shadow() ? "1" : "0";
        }
        CompletableFuture<List<Long>> reply = batcher.decide(keyNames, arguments);
        if (!quotas) {
            return reply;
        }
        return reply.thenCompose(numbers -> {
            long storeTime = periodMissed(numbers, checks);
            if (storeTime < 0) {
                return CompletableFuture.completedFuture(numbers);
            }
            if (attempt >= QUOTA_PERIOD_ATTEMPTS) {
                return CompletableFuture.failedFuture(new IllegalStateException("Redis's time left the calendar "
                        + "quota's period " + attempt + " times in a row (its clock jumps?); decided without it"));
            }
            return send(checks, storeTime, attempt + 1);
        });
    }

    /**
     * The store's time the script answered when it refused to decide a calendar quota for a period not holding it
     * (its reset-after -1, its retry-after that time), or -1 when every quota's period held it.
     */
    private static long periodMissed(List<Long> reply, List<Check> checks) {
        if (reply.size() != 1 + checks.size() * 4 || reply.get(0) == 1L) {
            return -1;
        }
        for (int i = 0; i < checks.size(); i++) {
            int at = 1 + i * 4;
            if (reply.get(at + 3) == -1L) {
                return reply.get(at + 2);
            }
        }
        return -1;
    }

    /** Tells each request which permits this call granted — or may have, when it failed after being sent. */
    private void reportPermits(List<Check> checks, List<Long> reply, Throwable failure) {
        if (failure instanceof LimiterConnection.NotConnectedException
                || failure != null && failure.getCause() instanceof LimiterConnection.NotConnectedException) {
            return; // nothing was sent
        }
        boolean written = failure != null || reply.size() == 1 + checks.size() * 4 && reply.get(0) == 1L;
        if (!written) {
            return; // an enforced check refused: the script wrote nothing
        }
        List<Check> granted = new ArrayList<>(1);
        for (int i = 0; i < checks.size(); i++) {
            Check check = checks.get(i);
            if (check.concurrency() && (failure != null || reply.get(1 + i * 4) == 1L)) {
                granted.add(check);
            }
        }
        if (!granted.isEmpty()) {
            granted.get(0).permits().granted(permits, granted);
        }
    }

    private static List<RuleOutcome> toOutcomes(List<Long> reply, List<Check> checks) {
        if (reply.size() != 1 + checks.size() * 4) {
            throw new IllegalStateException("rate limit script returned " + reply.size() + " numbers for "
                    + checks.size() + " checks");
        }
        List<RuleOutcome> outcomes = new ArrayList<>(checks.size());
        for (int i = 0; i < checks.size(); i++) {
            int at = 1 + i * 4;
            outcomes.add(new RuleOutcome(checks.get(i), reply.get(at) == 1L, reply.get(at + 1),
                    Duration.ofNanos(reply.get(at + 2) * 1_000), Duration.ofNanos(reply.get(at + 3) * 1_000)));
        }
        return outcomes;
    }
}
