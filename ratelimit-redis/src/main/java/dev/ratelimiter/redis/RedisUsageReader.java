package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.BucketReading;
import dev.ratelimiter.core.StoreTimeoutException;
import dev.ratelimiter.core.UsageProbe;
import dev.ratelimiter.core.UsageReader;
import io.lettuce.core.ScriptOutputType;
import reactor.core.publisher.Mono;

/**
 * Buckets read from Redis without spending ({@link LimiterScript#PEEK}): the same keys and script arguments the
 * decisions use ({@link RedisRateLimitStore#SCRIPT_ARGUMENTS}), so a new algorithm's code reaches the peek script
 * without anything here changing. A local-mode bucket is read where {@code settle.lua} keeps it, its pool and the
 * shares instances hold. On Redis Cluster the keys are read one hash tag per call, all at once (one script may only
 * touch keys of one slot). The reading waits at most {@code timeout}; without a connection it fails at once.
 */
public final class RedisUsageReader implements UsageReader {

    private final LimiterConnection redis;
    private final RedisKeys keys;
    private final boolean splitBySlot;
    private final Duration timeout;
    private final QuotaPeriodKeys quotaPeriods = new QuotaPeriodKeys();

    public RedisUsageReader(LimiterConnection redis, RedisKeys keys, boolean splitBySlot, Duration timeout) {
        this.redis = redis;
        this.keys = keys;
        this.splitBySlot = splitBySlot;
        this.timeout = timeout;
    }

    @Override
    public Mono<List<BucketReading>> read(List<UsageProbe> probes) {
        if (probes.isEmpty()) {
            return Mono.just(List.of());
        }
        return Replies.of(() -> readAll(probes)).timeout(timeout, Mono.error(() -> new StoreTimeoutException(
                "Redis did not answer the usage read within " + timeout.toMillis() + " ms")));
    }

    private CompletableFuture<List<BucketReading>> readAll(List<UsageProbe> probes) {
        String[] names = new String[probes.size()];
        String[] periods = new String[probes.size()];
        // A calendar quota's count is kept per period, in a key named by it: the period holding now. This JVM's clock
        // stands in for the store's, which a reader does not follow; within a boundary's skew the script answers the
        // period it was named as ended (whole) rather than counting it into the next.
        long nowMicros = System.currentTimeMillis() * 1_000L;
        for (int i = 0; i < probes.size(); i++) {
            UsageProbe probe = probes.get(i);
            names[i] = probe.local() ? keys.settledBucket(probe.bucket()) : keys.bucket(probe.bucket());
            CalendarQuotaLimit quota = QuotaPeriodKeys.quotaOf(probe.rule().limit());
            if (quota != null) {
                QuotaPeriodKeys.Period period = quotaPeriods.at(quota, nowMicros);
                names[i] = names[i] + period.suffix();
                periods[i] = period.bounds();
            }
        }
        if (!splitBySlot) {
            return peek(probes, names, periods);
        }
        Map<String, List<Integer>> byTag = new LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            byTag.computeIfAbsent(hashTag(names[i]), tag -> new ArrayList<>()).add(i);
        }
        List<List<Integer>> groups = List.copyOf(byTag.values());
        List<CompletableFuture<List<BucketReading>>> calls = new ArrayList<>();
        for (List<Integer> group : groups) {
            calls.add(peek(group.stream().map(probes::get).toList(),
                    group.stream().map(i -> names[i]).toArray(String[]::new),
                    group.stream().map(i -> periods[i]).toArray(String[]::new)));
        }
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).thenApply(done -> {
            BucketReading[] readings = new BucketReading[probes.size()];
            for (int g = 0; g < groups.size(); g++) {
                List<BucketReading> read = calls.get(g).join();
                for (int j = 0; j < groups.get(g).size(); j++) {
                    readings[groups.get(g).get(j)] = read.get(j);
                }
            }
            return Arrays.asList(readings);
        });
    }

    private CompletableFuture<List<BucketReading>> peek(List<UsageProbe> probes, String[] names, String[] periods) {
        String[] arguments = new String[1 + probes.size() * 4];
        arguments[0] = "0";
        for (int i = 0; i < probes.size(); i++) {
            UsageProbe probe = probes.get(i);
            String[] limit = probe.rule().limit().match(RedisRateLimitStore.SCRIPT_ARGUMENTS);
            int at = 1 + i * 4;
            arguments[at] = limit[0];
            arguments[at + 1] = limit[1];
            arguments[at + 2] = periods[i] != null ? periods[i] : limit[2];
            arguments[at + 3] = probe.local() ? "1" : "0";
        }
        return redis.<List<Long>>script(LimiterScript.PEEK, ScriptOutputType.MULTI, names, arguments)
                .thenApply(reply -> readings(reply, probes.size()));
    }

    /** The script's reply as readings: four numbers per key, then the store's time. */
    static List<BucketReading> readings(List<Long> reply, int count) {
        if (reply.size() != count * 4 + 1) {
            throw new IllegalStateException("peek script returned " + reply.size() + " numbers for " + count + " keys");
        }
        List<BucketReading> readings = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int at = i * 4;
            readings.add(new BucketReading(reply.get(at) == 1L, reply.get(at + 1),
                    Duration.ofNanos(reply.get(at + 2) * 1_000), reply.get(at + 3)));
        }
        return readings;
    }

    private static String hashTag(String key) {
        int open = key.indexOf('{');
        int close = key.indexOf('}', open + 1);
        return open >= 0 && close > open ? key.substring(open + 1, close) : key;
    }
}
