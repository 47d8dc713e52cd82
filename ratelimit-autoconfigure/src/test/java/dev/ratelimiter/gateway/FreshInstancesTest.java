package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;

import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.testsupport.LimiterProbe;
import dev.ratelimiter.testsupport.PacedClient;
import dev.ratelimiter.testsupport.RedisCluster;
import dev.ratelimiter.testsupport.RedisCpuTime;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.SaturatedGatewayContract;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static dev.ratelimiter.testsupport.SaturatedGatewayContract.CAPACITY;
import static dev.ratelimiter.testsupport.SaturatedGatewayContract.HOT_KEY;
import static dev.ratelimiter.testsupport.SaturatedGatewayContract.PER_SECOND;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Gateway instances that have just started, with no request before the test's: the first decisions are as exact as
 * any later one. Start-up opened a connection to every primary, loaded every script and counted the live instances
 * before the application took traffic, so no first request waits for any of that past the 5 ms store timeout and
 * decides from a fallback bucket. A client at four times its limit, spread round-robin over the instances from their
 * first request, is held to its one bucket.
 */
class FreshInstancesTest {

    private static final double RATE = 40;
    private static final Duration RUN = Duration.ofSeconds(10);
    private static final int FIRST = 100;

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    @BeforeEach
    void noInstances() {
        instances.clear();
    }

    @AfterEach
    void stopInstances() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    @Test
    void twoFreshInstancesDecideFromRedisFromTheirFirstRequest() {
        for (int i = 0; i < 2; i++) {
            instances.add(fixture.start(limits()));
        }
        heldToItsBucketFromTheFirstRequest("2 instances, standalone Redis", List.of(fixture.redis().server()));
    }

    @Test
    void threeFreshInstancesDecideFromRedisFromTheirFirstRequest() {
        for (int i = 0; i < 3; i++) {
            instances.add(fixture.start(limits()));
        }
        heldToItsBucketFromTheFirstRequest("3 instances, standalone Redis", List.of(fixture.redis().server()));
    }

    @Test
    void twoFreshInstancesOnAClusterDecideFromRedisFromTheirFirstRequest() {
        try (RedisCluster cluster = RedisCluster.start()) {
            String nodes = "spring.data.redis.cluster.nodes=" + cluster.nodesProperty();
            String anyNode = "redis://" + cluster.nodes().get(0);
            for (int i = 0; i < 2; i++) {
                instances.add(GatewayInstance.start(anyNode, fixture.upstream().uri(), limits(nodes)));
            }
            heldToItsBucketFromTheFirstRequest("2 instances, Redis Cluster of 3 primaries", cluster.allNodes());
            // closed on a live cluster (see ClosedAfterTheClass)
            instances.forEach(ConfigurableApplicationContext::close);
            instances.clear();
        }
    }

    private void heldToItsBucketFromTheFirstRequest(String what, List<? extends RedisServer> redis) {
        RedisCpuTime redisBefore = RedisCpuTime.of(redis);
        int count = instances.size();
        List<LimiterProbe> limiters = instances.stream().map(StoreStackProbe::of).map(LimiterProbe.class::cast)
                .toList();
        List<Integer> countedAtStart = instances.stream().map(FreshInstancesTest::liveInstances).toList();
        int[] ports = instances.stream().mapToInt(GatewayInstance::port).toArray();
        // each instance's fallback decisions when it had answered its first 100 requests
        AtomicIntegerArray answered = new AtomicIntegerArray(count);
        Map<Integer, Long> fallbacksAtFirst = new ConcurrentHashMap<>();
        // for the log: the answers (instance, its answer number, sent at) after which an instance had decided without
        // Redis again
        List<String> fallbacksSeen = Collections.synchronizedList(new ArrayList<>());
        long[] fallbacksBefore = new long[count];
        PacedClient.Result hot = PacedClient.to(ports).path("/api/hot").apiKey(HOT_KEY).perSecond(RATE)
                .onAnswer(answer -> {
                    int number = answered.incrementAndGet(answer.target());
                    long fallbacks = limiters.get(answer.target()).fallbackDecisions();
                    synchronized (fallbacksBefore) {
                        if (fallbacks > fallbacksBefore[answer.target()]) {
                            fallbacksBefore[answer.target()] = fallbacks;
                            fallbacksSeen.add(String.format("instance %d answer %d at %.3f s: %d", answer.target(),
                                    number, answer.sentAtNanos() / 1e9, fallbacks));
                        }
                    }
                    if (number == FIRST) {
                        fallbacksAtFirst.put(answer.target(), fallbacks);
                    }
                })
                .start(RUN).finish();
        List<Integer> countedAfter = instances.stream().map(FreshInstancesTest::liveInstances).toList();
        RedisCpuTime redisCpu = RedisCpuTime.of(redis).since(redisBefore);

        double expected = CAPACITY + PER_SECOND * hot.sendingSpan().toNanos() / 1e9;
        long admitted = hot.count(200);
        System.out.printf("Fresh instances (%s): hot key %s: admitted %d, C + r·T = %.1f (%+.1f %%)%n"
                + "  fallback decisions at each instance's %dth answer %s (seen after %s); limiters %s%n"
                + "  live instances counted by each: right after start %s, after the run %s%n  %s%n", what, hot,
                admitted, expected, (admitted / expected - 1) * 100, FIRST, fallbacksAtFirst, fallbacksSeen,
                limiters.stream().map(LimiterProbe::snapshot).toList(), countedAtStart, countedAfter, redisCpu);

        assertThat(hot.byStatus()).as("admitted or refused, nothing else").containsOnlyKeys(200, 429);
        // 5 %, and the request in flight at each end of the span
        assertThat(admitted).as("hot key admitted, C + r·T = %.1f", expected)
                .isBetween((long) Math.floor(0.95 * expected) - 2, (long) Math.ceil(1.05 * expected) + 2);
        assertThat(fixture.upstream().hitsForApiKey(HOT_KEY)).isEqualTo(admitted);
        assertThat(fallbacksAtFirst).as("fallback decisions in each instance's first %d requests (seen after %s; %s)",
                FIRST, fallbacksSeen, redisCpu)
                .hasSize(count).allSatisfy((instance, fallbacks) -> assertThat(fallbacks).isZero());
        assertThat(countedAtStart.get(count - 1)).as("the last instance counted every instance before its first "
                + "request").isEqualTo(count);
        assertThat(countedAfter).as("each instance counts the instances started").containsOnly(count);
    }

    private static int liveInstances(ConfigurableApplicationContext instance) {
        return instance.getBean(LiveInstances.class).count();
    }

    /** The saturation tests' limits, as properties of a gateway started by hand, and {@code more}. */
    private static String[] limits(String... more) {
        List<String> properties = new ArrayList<>();
        SaturatedGatewayContract.limits().forEach((name, value) -> properties.add(name + "=" + value));
        properties.addAll(List.of(more));
        return properties.toArray(String[]::new);
    }
}
