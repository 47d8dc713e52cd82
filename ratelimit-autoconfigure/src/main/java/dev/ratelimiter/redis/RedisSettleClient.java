package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.ratelimiter.core.SettleClient;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Settles this instance's shares with Redis: one script call for every bucket, run by SHA. On Redis Cluster the
 * call is split by hash tag, one call per slot, sent together.
 */
public final class RedisSettleClient implements SettleClient {

    private final ReactiveStringRedisTemplate redis;
    private final RedisScript<List<Long>> script;
    private final RedisKeys keys;
    private final String instanceId = UUID.randomUUID().toString();
    private final Duration staleAfter;
    private final boolean splitBySlot;

    @SuppressWarnings({ "unchecked", "rawtypes" })
    public RedisSettleClient(ReactiveStringRedisTemplate redis, RedisKeys keys, Duration staleAfter,
            boolean splitBySlot) {
        this.redis = redis;
        this.keys = keys;
        this.staleAfter = staleAfter;
        this.splitBySlot = splitBySlot;
        this.script = (RedisScript) RedisScript.of(new ClassPathResource("META-INF/scripts/ratelimit/settle.lua"),
                List.class);
    }

    @Override
    public Mono<List<Grant>> settle(List<Report> reports) {
        if (!splitBySlot) {
            return run(reports);
        }
        Map<String, List<Report>> byPartition = new LinkedHashMap<>();
        reports.forEach(r -> byPartition.computeIfAbsent(r.bucket().partition(), p -> new ArrayList<>()).add(r));
        return Flux.fromIterable(byPartition.values())
                .flatMapSequential(group -> run(group).map(grants -> Map.entry(group, grants)))
                .collectList()
                .map(groups -> {
                    Map<Report, Grant> byReport = new HashMap<>();
                    groups.forEach(g -> {
                        for (int i = 0; i < g.getKey().size(); i++) {
                            byReport.put(g.getKey().get(i), g.getValue().get(i));
                        }
                    });
                    return reports.stream().map(byReport::get).toList();
                });
    }

    private Mono<List<Grant>> run(List<Report> reports) {
        List<String> keyNames = new ArrayList<>(reports.size());
        List<String> arguments = new ArrayList<>(3 + reports.size() * 6);
        arguments.add(instanceId);
        arguments.add(String.valueOf(staleAfter.toNanos() / 1_000));
        arguments.add(String.valueOf(RedisRateLimitStore.TTL_SLACK_MILLIS));
        for (Report report : reports) {
            keyNames.add(keys.bucket(report.bucket()));
            arguments.add(String.valueOf(report.limit().capacity()));
            arguments.add(String.valueOf(report.limit().tokensPerSecond()));
            arguments.add(String.valueOf(report.demand()));
            arguments.add(String.valueOf(report.held()));
            arguments.add(String.valueOf(report.returned()));
            arguments.add(String.valueOf(report.provisionalSpent()));
        }
        return redis.execute(script, keyNames, arguments).next().map(reply -> {
            List<Grant> grants = new ArrayList<>(reports.size());
            for (int i = 0; i < reports.size(); i++) {
                grants.add(new Grant(reply.get(i * 3), reply.get(i * 3 + 1), reply.get(i * 3 + 2)));
            }
            return grants;
        });
    }
}
