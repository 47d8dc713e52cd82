package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import dev.ratelimiter.core.SettleClient;
import io.lettuce.core.ScriptOutputType;
import reactor.core.publisher.Mono;

/**
 * Settles this instance's shares with Redis by {@link LimiterScript#SETTLE}, run by SHA: all buckets at once, in
 * calls of at most {@value #MAX_BUCKETS_PER_CALL} buckets so that no single script holds Redis (and the exact-mode
 * decisions queued behind it) for long. On Redis Cluster the buckets are grouped by their settle hash tag
 * ({@link RedisKeys#settledBucket}): at most {@link RedisKeys#SETTLE_SLOTS} groups whatever the number of clients.
 */
public final class RedisSettleClient implements SettleClient {

    /**
     * Redis runs one script at a time, and every exact decision and every other client waits behind it. Measured with
     * {@code SettleCost} (benchmarks module, 2026-12-01, Redis 7.0 on this project's 2-core machine, nothing else
     * running): 25–33 µs of Redis CPU per bucket (three commands each), so the 256 buckets per call allowed before held
     * Redis for 8 ms, longer than the 5 ms an exact decision may wait. 32 keep a call near 1 ms at ~0.1 ms of call
     * overhead each.
     */
    static final int MAX_BUCKETS_PER_CALL = 32;

    /**
     * Settle intervals an instance may stay silent before the others count it dead and its shares go back to the
     * pool. A few missed settles (a pause, a slow Redis) must not cost an instance its shares; a dead instance's
     * share must not stay locked away for long either.
     */
    public static final int SILENT_INTERVALS_BEFORE_STALE = 10;

    private final LimiterConnection redis;
    /** settle.lua's arguments per bucket, and the numbers it answers per bucket. */
    private static final int ARGUMENTS_PER_BUCKET = 9;
    private static final int NUMBERS_PER_GRANT = 4;

    private final RedisKeys keys;
    private final String instanceId = UUID.randomUUID().toString();
    private final Duration staleAfter;
    private final boolean splitBySlot;

    /**
     * @param staleAfter how long another instance may stay silent before its shares return to the pool
     * @param splitBySlot whether Redis is a cluster (calls are grouped by slot)
     */
    public RedisSettleClient(LimiterConnection redis, RedisKeys keys, Duration staleAfter, boolean splitBySlot) {
        this.redis = redis;
        this.keys = keys;
        this.staleAfter = staleAfter;
        this.splitBySlot = splitBySlot;
    }

    /**
     * A client for instances that settle every {@code interval}: another instance is stale after
     * {@link #SILENT_INTERVALS_BEFORE_STALE} of them.
     */
    public static RedisSettleClient settlingEvery(Duration interval, LimiterConnection redis, RedisKeys keys,
            boolean splitBySlot) {
        return new RedisSettleClient(redis, keys, interval.multipliedBy(SILENT_INTERVALS_BEFORE_STALE), splitBySlot);
    }

    @Override
    public Mono<List<Grant>> settle(List<Report> reports) {
        return Replies.of(() -> settleAll(reports));
    }

    private CompletableFuture<List<Grant>> settleAll(List<Report> reports) {
        Map<String, List<Integer>> byTag = new LinkedHashMap<>();
        for (int i = 0; i < reports.size(); i++) {
            String tag = splitBySlot ? RedisKeys.settleTag(reports.get(i).bucket()) : "";
            byTag.computeIfAbsent(tag, t -> new ArrayList<>()).add(i);
        }
        List<List<Integer>> calls = new ArrayList<>();
        for (List<Integer> group : byTag.values()) {
            for (int from = 0; from < group.size(); from += MAX_BUCKETS_PER_CALL) {
                calls.add(group.subList(from, Math.min(group.size(), from + MAX_BUCKETS_PER_CALL)));
            }
        }
        Grant[] grants = new Grant[reports.size()];
        // One call after the other: sent at once, they would be read by Redis back to back (it runs every complete
        // command of a client's read buffer before it serves anyone else), and this instance's exact decisions on
        // the same connection would wait behind the whole settle. Between two calls, everyone else is served.
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (List<Integer> call : calls) {
            chain = chain.thenCompose(previous -> run(reports, call).handle((answered, failure) -> {
                for (int i = 0; i < call.size(); i++) {
                    grants[call.get(i)] = failure == null ? answered.get(i) : unanswered(failure);
                }
                return null;
            }));
        }
        return chain.thenApply(done -> List.of(grants));
    }

    /**
     * A call that failed: never sent when the connection was not open (the store did nothing), else unknown — it may
     * have run in Redis and its reply been lost, and a return handed back again would be counted twice.
     */
    private static Grant unanswered(Throwable failure) {
        Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        return cause instanceof LimiterConnection.NotConnectedException ? Grant.NOT_SENT : Grant.UNKNOWN;
    }

    private CompletableFuture<List<Grant>> run(List<Report> reports, List<Integer> indexes) {
        String[] keyNames = new String[indexes.size()];
        String[] arguments = new String[3 + indexes.size() * ARGUMENTS_PER_BUCKET];
        arguments[0] = instanceId;
        arguments[1] = String.valueOf(staleAfter.toNanos() / 1_000);
        arguments[2] = String.valueOf(RedisRateLimitStore.TTL_SLACK_MILLIS);
        for (int k = 0; k < indexes.size(); k++) {
            Report report = reports.get(indexes.get(k));
            keyNames[k] = keys.settledBucket(report.bucket());
            int at = 3 + k * ARGUMENTS_PER_BUCKET;
            arguments[at] = String.valueOf(report.limit().capacity());
            arguments[at + 1] = String.valueOf(report.limit().tokensPerSecond());
            arguments[at + 2] = String.valueOf(report.demand());
            arguments[at + 3] = String.valueOf(report.held());
            arguments[at + 4] = String.valueOf(report.returned());
            arguments[at + 5] = String.valueOf(report.provisionalSpent());
            arguments[at + 6] = String.valueOf(report.need());
            arguments[at + 7] = String.valueOf(report.want());
            arguments[at + 8] = String.valueOf(report.silenceMicros());
        }
        return redis.<List<Long>>script(LimiterScript.SETTLE, ScriptOutputType.MULTI, keyNames, arguments)
                .thenApply(reply -> {
                    if (reply.size() != indexes.size() * NUMBERS_PER_GRANT) {
                        throw new IllegalStateException("settle script returned " + reply.size() + " numbers for "
                                + indexes.size() + " buckets");
                    }
                    List<Grant> grants = new ArrayList<>(indexes.size());
                    for (int k = 0; k < indexes.size(); k++) {
                        int at = k * NUMBERS_PER_GRANT;
                        grants.add(new Grant(reply.get(at), reply.get(at + 1), reply.get(at + 2), reply.get(at + 3) == 1));
                    }
                    return grants;
                });
    }
}
