package dev.ratelimiter.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.FallbackCharges;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.TokenBucketLimit;
import io.lettuce.core.ScriptOutputType;
import reactor.core.publisher.Mono;

/**
 * Charges exact-mode buckets in Redis for what this instance admitted on its own while Redis could not answer
 * ({@link LimiterScript#CHARGE}): one call per partition (hash slot) on Redis Cluster, at most
 * {@value #MAX_KEYS_PER_CALL} buckets each, one after the other so that decisions on the same connection are not kept
 * waiting behind them.
 */
public final class RedisFallbackCharges implements FallbackCharges {

    static final int MAX_KEYS_PER_CALL = 128;

    private final LimiterConnection redis;
    private final RedisKeys keys;
    private final boolean splitBySlot;
    private final QuotaPeriodKeys quotaPeriods = new QuotaPeriodKeys();

    public RedisFallbackCharges(LimiterConnection redis, RedisKeys keys, boolean splitBySlot) {
        this.redis = redis;
        this.keys = keys;
        this.splitBySlot = splitBySlot;
    }

    @Override
    public Mono<Void> charge(List<Charge> charges) {
        Map<String, List<Charge>> byPartition = new LinkedHashMap<>();
        for (Charge charge : charges) {
            if (arguments(charge.check().rule().limit()) != null) {
                String partition = splitBySlot ? charge.check().bucket().partition() : "";
                byPartition.computeIfAbsent(partition, p -> new ArrayList<>()).add(charge);
            }
        }
        List<List<Charge>> calls = new ArrayList<>();
        for (List<Charge> group : byPartition.values()) {
            for (int from = 0; from < group.size(); from += MAX_KEYS_PER_CALL) {
                calls.add(group.subList(from, Math.min(group.size(), from + MAX_KEYS_PER_CALL)));
            }
        }
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int i = 0; i < calls.size(); i++) {
            List<Charge> call = calls.get(i);
            // The calls not sent when one fails unsent: those may be sent again, the ones sent before must not be.
            List<Charge> fromHere = calls.subList(i, calls.size()).stream().flatMap(List::stream).toList();
            chain = chain.thenCompose(previous -> run(call).exceptionallyCompose(failure -> CompletableFuture
                    .failedFuture(notSent(failure) ? new NotSentException(failure.getMessage(), failure, fromHere)
                            : failure)));
        }
        return Replies.of(chain).onErrorMap(failure -> failure.getCause() instanceof NotSentException,
                Throwable::getCause);
    }

    private CompletableFuture<Void> run(List<Charge> charges) {
        String[] keyNames = new String[charges.size()];
        String[] arguments = new String[1 + charges.size() * 5];
        arguments[0] = String.valueOf(RedisRateLimitStore.TTL_SLACK_MILLIS);
        for (int i = 0; i < charges.size(); i++) {
            Charge charge = charges.get(i);
            keyNames[i] = keys.bucket(charge.check().bucket());
            String[] limit = arguments(charge.check().rule().limit());
            int at = 1 + i * 5;
            arguments[at] = limit[0];
            arguments[at + 1] = limit[1];
            arguments[at + 2] = limit[2];
            CalendarQuotaLimit quota = QuotaPeriodKeys.quotaOf(charge.check().rule().limit());
            if (quota != null) {
                // The period in progress on this JVM's clock: the fallback owes only the period in progress (see
                // BucketState.CalendarQuota), and charge.lua drops a charge whose period Redis's time has left.
                QuotaPeriodKeys.Period period = quotaPeriods.at(quota, System.currentTimeMillis() * 1_000L);
                keyNames[i] = keyNames[i] + period.suffix();
                arguments[at + 2] = period.bounds();
            }
            arguments[at + 3] = Double.toString(charge.tokens());
            arguments[at + 4] = Double.toString(charge.previousWindow());
        }
        return redis.<Long>script(LimiterScript.CHARGE, ScriptOutputType.INTEGER, keyNames, arguments)
                .thenApply(charged -> null);
    }

    /**
     * The script's three arguments for a limit it can charge (those of {@code rate_limit.lua}); null for one it
     * cannot: permits in progress are never charged back, they are given back.
     */
    private static final Limit.Cases<String[]> CHARGE_ARGUMENTS = new Limit.Cases<>() {

        @Override
        public String[] tokenBucket(TokenBucketLimit bucket) {
            return RedisRateLimitStore.SCRIPT_ARGUMENTS.tokenBucket(bucket);
        }

        @Override
        public String[] slidingWindow(SlidingWindowLimit window) {
            return RedisRateLimitStore.SCRIPT_ARGUMENTS.slidingWindow(window);
        }

        @Override
        public String[] concurrency(ConcurrencyLimit concurrency) {
            return null;
        }

        /** Charged to the counter of the period in progress; the bounds are filled in per call. */
        @Override
        public String[] calendarQuota(CalendarQuotaLimit quota) {
            return RedisRateLimitStore.SCRIPT_ARGUMENTS.calendarQuota(quota);
        }
    };

    private static String[] arguments(Limit limit) {
        return limit.match(CHARGE_ARGUMENTS);
    }

    private static boolean notSent(Throwable failure) {
        return failure instanceof LimiterConnection.NotConnectedException
                || failure.getCause() instanceof LimiterConnection.NotConnectedException;
    }
}
