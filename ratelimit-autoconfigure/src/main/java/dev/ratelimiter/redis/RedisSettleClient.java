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

    /** A settle script spends a few microseconds per bucket; this many keep one call well under a millisecond. */
    static final int MAX_BUCKETS_PER_CALL = 256;

    private final LimiterConnection redis;
    private final RedisKeys keys;
    private final String instanceId = UUID.randomUUID().toString();
    private final Duration staleAfter;
    private final boolean splitBySlot;

    public RedisSettleClient(LimiterConnection redis, RedisKeys keys, Duration staleAfter, boolean splitBySlot) {
        this.redis = redis;
        this.keys = keys;
        this.staleAfter = staleAfter;
        this.splitBySlot = splitBySlot;
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
        List<CompletableFuture<List<Grant>>> replies = calls.stream().map(call -> run(reports, call)).toList();
        return CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)).thenApply(all -> {
            Grant[] grants = new Grant[reports.size()];
            for (int c = 0; c < calls.size(); c++) {
                List<Grant> answered = replies.get(c).join();
                for (int i = 0; i < calls.get(c).size(); i++) {
                    grants[calls.get(c).get(i)] = answered.get(i);
                }
            }
            return List.of(grants);
        });
    }

    private CompletableFuture<List<Grant>> run(List<Report> reports, List<Integer> indexes) {
        String[] keyNames = new String[indexes.size()];
        String[] arguments = new String[3 + indexes.size() * 7];
        arguments[0] = instanceId;
        arguments[1] = String.valueOf(staleAfter.toNanos() / 1_000);
        arguments[2] = String.valueOf(RedisRateLimitStore.TTL_SLACK_MILLIS);
        for (int k = 0; k < indexes.size(); k++) {
            Report report = reports.get(indexes.get(k));
            keyNames[k] = keys.settledBucket(report.bucket());
            int at = 3 + k * 7;
            arguments[at] = String.valueOf(report.limit().capacity());
            arguments[at + 1] = String.valueOf(report.limit().tokensPerSecond());
            arguments[at + 2] = String.valueOf(report.demand());
            arguments[at + 3] = String.valueOf(report.held());
            arguments[at + 4] = String.valueOf(report.returned());
            arguments[at + 5] = String.valueOf(report.provisionalSpent());
            arguments[at + 6] = String.valueOf(report.need());
        }
        return redis.<List<Long>>script(LimiterScript.SETTLE, ScriptOutputType.MULTI, keyNames, arguments)
                .thenApply(reply -> {
                    if (reply.size() != indexes.size() * 3) {
                        throw new IllegalStateException("settle script returned " + reply.size() + " numbers for "
                                + indexes.size() + " buckets");
                    }
                    List<Grant> grants = new ArrayList<>(indexes.size());
                    for (int k = 0; k < indexes.size(); k++) {
                        grants.add(new Grant(reply.get(k * 3), reply.get(k * 3 + 1), reply.get(k * 3 + 2)));
                    }
                    return grants;
                });
    }
}
