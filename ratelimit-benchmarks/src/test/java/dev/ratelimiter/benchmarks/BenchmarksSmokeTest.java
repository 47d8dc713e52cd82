package dev.ratelimiter.benchmarks;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the benchmarks from rotting: a very short gateway load run in each mode and a small memory measurement.
 * The figures themselves come from {@code java -jar ratelimit-benchmarks/target/benchmarks.jar}, not from here.
 */
class BenchmarksSmokeTest {

    @Test
    void theGatewayLoadRunMeasuresEveryMode() {
        List<GatewayLoadRun.Result> results = GatewayLoadRun.run(Duration.ofMillis(500), Duration.ofSeconds(1), 4, 1);
        GatewayLoadRun.print(results);
        assertThat(results).extracting(GatewayLoadRun.Result::mode).containsExactly("off", "exact", "local");
        assertThat(results).allSatisfy(result -> {
            assertThat(result.requestsPerSecond()).isPositive();
            assertThat(result.allowed()).isPositive();
            assertThat(result.refused()).as("roomy limits: nobody is refused, in any mode").isZero();
        });
    }

    @Test
    void theSettleCostIsMeasuredByRedisItself() {
        try (RedisServer redis = RedisServers.start()) {
            SettleCost.Result result = SettleCost.measure(redis, 100, 2, 2);
            System.out.println(SettleCost.describe(result));
            assertThat(result.settles()).isEqualTo(4);
            // 100 buckets in calls of at most 32: 4 calls per settle
            assertThat(result.scriptCalls()).isEqualTo(16);
            // per bucket HGETALL, HSET, PEXPIRE; per call TIME; and the EVALSHA itself
            assertThat(result.commandsPerSettle()).isEqualTo(100 * 3 + 4 * 2);
            assertThat(result.redisCpuMillisPerSettle()).isPositive();
            assertThat(result.bucketsPerSecondPerShard()).isPositive();
        }
    }

    @Test
    void heapPerTrackedKeyIsMeasured() {
        long[] bytes = LocalMemory.measure(20_000);
        assertThat(bytes[0]).isBetween(1L, 2_000L);
        assertThat(bytes[1]).isBetween(1L, 2_000L);
    }
}
