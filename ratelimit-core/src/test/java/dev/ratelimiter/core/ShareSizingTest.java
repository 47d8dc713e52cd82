package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Wherever a limit is divided — hot-key shards, the store-down fair share, local-mode shares — a request whose cost
 * fits the whole limit must be able to pass somewhere: a share smaller than one request refuses every such request
 * on every instance. Where the division can be checked up front, the rule is refused with a message.
 */
class ShareSizingTest {

    private final Rule perRoute = new Rule("per-route", "per-route", Match.ANY, List.of(Dimension.ROUTE),
            TokenBucketLimit.of("per-route.", 100, 100, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);

    @Test
    void aRuleWhoseOwnCostExceedsEveryShardIsRefusedNamingTheShards() {
        assertThatThrownBy(() -> new Rule("hot", "hot", Match.ANY, List.of(Dimension.TENANT),
                TokenBucketLimit.of("hot.", 100, 100, Duration.ofSeconds(1)), 10, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 16))
                .isInstanceOf(InvalidLimitException.class).hasMessageContaining("16 shards of 6, less than its cost 10")
                .hasMessageContaining("at most 10 shards");
    }

    @Test
    void aShardHoldsOneRequestWhenTheRoutesCostExceedsItsShareOfTheLimit() {
        Rule sharded = new Rule("hot", "hot", Match.ANY, List.of(Dimension.TENANT),
                TokenBucketLimit.of("hot.", 100, 100, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 16);
        List<Check> seen = new ArrayList<>();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> RuleSet.builder("free").rule(sharded).build(),
                checks -> {
                    seen.addAll(checks);
                    return Mono.just(Verdict.evaluated(List.of(), Verdict.Source.STORE));
                }, ClientIds.unkeyed());
        evaluator.check(new RequestAttributes("k", null, "tenant", null, "api", "/x", "default", "free", 10),
                new RequestPermits()).block();
        evaluator.check(new RequestAttributes("k", null, "tenant", null, "api", "/x", "default", "free", 1),
                new RequestPermits()).block();
        assertThat(seen.get(0).cost()).isEqualTo(10);
        assertThat(seen.get(0).rule().limit().quota()).as("a shard for a request of cost 10").isGreaterThanOrEqualTo(10);
        assertThat(seen.get(1).rule().limit().quota()).as("a shard otherwise: 100 / 16").isEqualTo(7);
    }

    @Test
    void theFairShareWithoutTheStoreHoldsOneRequestOfItsCost() {
        // Ten instances, share factor 2: the share of 100 is 20, less than a request of cost 25.
        WithoutStore withoutStore = new WithoutStore(new LocalBucketStore(100), () -> 10, StoreMetrics.NONE,
                () -> Duration.ofSeconds(1), 2.0);
        Check costly = new Check(perRoute, new BucketKey(ClientIds.unkeyed().of("route"), "per-route"), 25, false);
        assertThat(withoutStore.decide(List.of(costly)).allowed()).as("one request of cost 25 passes").isTrue();
        assertThat(withoutStore.decide(List.of(costly)).allowed()).as("and only one").isFalse();
        Check cheap = new Check(perRoute, new BucketKey(ClientIds.unkeyed().of("other"), "per-route"), 1, false);
        int allowed = 0;
        for (int i = 0; i < 30; i++) {
            allowed += withoutStore.decide(List.of(cheap)).allowed() ? 1 : 0;
        }
        assertThat(allowed).as("cheap requests still get the share of 20").isEqualTo(20);
    }

    @Test
    void aLocalModeShareStartsWithAtLeastOneRequestOfItsCost() {
        Rule local = new Rule("local", "local", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("local.", 100, 100, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.LOCAL, 1);
        LeaseStore leases = new LeaseStore(reports -> Mono.never(), new WithoutStore(new LocalBucketStore(100),
                () -> 10, StoreMetrics.NONE, () -> Duration.ofSeconds(1)), () -> 10, Duration.ofMillis(100), 1_000,
                System::nanoTime);
        Check costly = new Check(local, new BucketKey(ClientIds.unkeyed().of("client"), "local"), 25, false);
        assertThat(leases.decide(List.of(costly)).allowed())
                .as("a provisional share of 100 / 10 instances would be 10, less than the cost 25").isTrue();
    }
}
