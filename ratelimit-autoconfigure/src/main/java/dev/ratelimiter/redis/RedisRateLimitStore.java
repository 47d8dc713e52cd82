package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Buckets in Redis: every check of a request in one {@link RateLimitScript} call, one round trip, atomic.
 *
 * <p>On Redis Cluster one script may only touch keys of one slot. With {@code splitBySlot}, checks are grouped by
 * their partition (hash tag) and each group is sent as its own script call, all at once: still one round trip of
 * wall time, but all-or-nothing holds within a group only. A client's own rules share its partition and stay
 * atomic together; a per-route cap in another slot may then spend a token for a request another group refused
 * (never the reverse: nothing is ever under-counted).
 */
public final class RedisRateLimitStore implements RateLimitStore {

    /** Extra lifetime of a key beyond its state lifetime, so a key is not dropped a moment too early. */
    static final long TTL_SLACK_MILLIS = 1_000;

    private final ReactiveStringRedisTemplate redis;
    private final RedisScript<List<Long>> script;
    private final RedisKeys keys;
    private final boolean splitBySlot;
    private final RedisPermits permits;

    public RedisRateLimitStore(ReactiveStringRedisTemplate redis, RedisScript<List<Long>> script, RedisKeys keys,
            boolean splitBySlot) {
        this.redis = redis;
        this.script = script;
        this.keys = keys;
        this.splitBySlot = splitBySlot;
        this.permits = new RedisPermits(redis, keys, splitBySlot, System::nanoTime);
    }

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        Mono<Verdict> verdict = decide(checks);
        if (checks.stream().noneMatch(Check::concurrency)) {
            return verdict;
        }
        return verdict.doOnNext(decided -> permits.taken(decided.permitsHeld()));
    }

    @Override
    public Mono<Void> release(List<Check> held, Verdict.Source source) {
        return source == null ? permits.abandon(held) : permits.release(held);
    }

    /** The permits this store holds for requests of this instance, renewed while they run. */
    public RedisPermits permits() {
        return permits;
    }

    private Mono<Verdict> decide(List<Check> checks) {
        if (!splitBySlot) {
            return run(checks).map(outcomes -> Verdict.evaluated(outcomes, Verdict.Source.STORE));
        }
        Map<String, List<Check>> byPartition = new LinkedHashMap<>();
        checks.forEach(check -> byPartition.computeIfAbsent(check.bucket().partition(), p -> new ArrayList<>()).add(check));
        if (byPartition.size() == 1) {
            return run(checks).map(outcomes -> Verdict.evaluated(outcomes, Verdict.Source.STORE));
        }
        return Flux.fromIterable(byPartition.values())
                .flatMapSequential(this::run)
                .collectList()
                .map(groups -> {
                    Map<Check, RuleOutcome> byCheck = new LinkedHashMap<>();
                    groups.forEach(group -> group.forEach(outcome -> byCheck.put(outcome.check(), outcome)));
                    return Verdict.evaluated(checks.stream().map(byCheck::get).toList(), Verdict.Source.STORE);
                });
    }

    private Mono<List<RuleOutcome>> run(List<Check> checks) {
        List<String> keyNames = new ArrayList<>(checks.size());
        List<String> arguments = new ArrayList<>(1 + checks.size() * 5);
        arguments.add(String.valueOf(TTL_SLACK_MILLIS));
        for (Check check : checks) {
            keyNames.add(keys.bucket(check.bucket()));
            Limit limit = check.rule().limit();
            if (limit instanceof TokenBucketLimit bucket) {
                arguments.add("t");
                arguments.add(String.valueOf(bucket.capacity()));
                arguments.add(String.valueOf(bucket.tokensPerSecond()));
            }
            else if (limit instanceof SlidingWindowLimit window) {
                arguments.add("w");
                arguments.add(String.valueOf(window.limit()));
                arguments.add(String.valueOf(window.window().toMillis()));
            }
            else {
                ConcurrencyLimit concurrency = (ConcurrencyLimit) limit;
                arguments.add("c");
                arguments.add(String.valueOf(concurrency.maxInProgress()));
                arguments.add(String.valueOf(concurrency.lease().toMillis()));
                arguments.add(check.permit());
                arguments.add(check.shadow() ? "1" : "0");
                continue;
            }
            arguments.add(String.valueOf(check.cost()));
            arguments.add(check.shadow() ? "1" : "0");
        }
        return redis.execute(script, keyNames, arguments).next().map(reply -> toOutcomes(reply, checks));
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
