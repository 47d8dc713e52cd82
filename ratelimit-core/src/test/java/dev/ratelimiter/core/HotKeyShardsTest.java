package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

class HotKeyShardsTest {

    @Test
    void aShardedTenantBucketSpreadsItsCallersOverShardsEachHoldingAShareOfTheLimit() {
        Rule perTenant = new Rule("tenant-cap", "tenant-cap", Match.ANY, List.of(Dimension.TENANT),
                TokenBucketLimit.of("t.", 1_600, 1_600, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 16);
        List<Check> seen = new ArrayList<>();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> RuleSet.builder("free").rule(perTenant).build(),
                checks -> {
                    seen.addAll(checks);
                    return Mono.just(Verdict.evaluated(List.of(), Verdict.Source.STORE));
                }, ClientIds.unkeyed());
        for (int caller = 0; caller < 400; caller++) {
            evaluator.check(new RequestAttributes("key-" + caller, null, "big-tenant", null, "api", "/x", "default",
                    "free", 1), new RequestPermits()).block();
        }
        Set<String> partitions = new HashSet<>();
        seen.forEach(check -> partitions.add(check.bucket().partition()));
        assertThat(partitions).as("16 sub-buckets, each its own Redis hash tag").hasSize(16);
        assertThat(seen).allSatisfy(check -> assertThat(check.rule().limit().quota()).isEqualTo(100));
        assertThat(seen.get(0).rule()).as("one scaled rule object, cached").isSameAs(seen.get(399).rule());
        evaluator.check(new RequestAttributes("key-7", null, "big-tenant", null, "api", "/x", "default", "free", 1),
                new RequestPermits()).block();
        assertThat(seen.get(seen.size() - 1).bucket()).as("a caller always lands on the same shard")
                .isEqualTo(seen.get(7).bucket());
    }
}
