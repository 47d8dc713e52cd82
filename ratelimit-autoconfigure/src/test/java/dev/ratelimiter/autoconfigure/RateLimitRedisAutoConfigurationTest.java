package dev.ratelimiter.autoconfigure;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;

import dev.ratelimiter.autoconfigure.store.RateLimitRedis;
import dev.ratelimiter.autoconfigure.store.RedisLocation;
import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.MemoryUntilShared;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.SettleLoop;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.RedisServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(OutputCaptureExtension.class)
class RateLimitRedisAutoConfigurationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                    DataRedisReactiveAutoConfiguration.class, RateLimitRedisAutoConfiguration.class,
                    RateLimitAutoConfiguration.class));

    @Test
    void withRedisAnsweringBucketsLiveInRedisBehindATimeout() {
        runner.withPropertyValues("spring.data.redis.url=" + redis.url()).run(context -> {
            assertThat(context.getBean(RateLimitStore.class).find(FailSafeStore.class)).isPresent();
            assertThat(context.getBean(RateLimitStore.class)).isSameAs(context.getBean(StoreStack.class).store());
            assertThat(context.getBean(RedisKeys.class).pattern()).isEqualTo("rl:*");
        });
    }

    @Test
    void withLazyBeansTheBackgroundLoopsAndTheRuleSyncStillStart() {
        // What spring.main.lazy-initialization=true installs. Nothing on the request path asks for these beans.
        runner.withPropertyValues("spring.data.redis.url=" + redis.url())
                .withInitializer(context -> context.addBeanFactoryPostProcessor(
                        new LazyInitializationBeanFactoryPostProcessor()))
                .run(context -> {
                    for (String bean : List.of("rateLimitSettleLoop", "rateLimitPermitRenewal",
                            "rateLimitInstanceHeartbeats", "rateLimitRuleSyncLifecycle")) {
                        assertThat(context.getBeanFactory().containsSingleton(bean)).as(bean + " made").isTrue();
                    }
                    assertThat(context.getBean(SettleLoop.class).isRunning()).as("settle loop running").isTrue();
                    assertThat(context.getBean(RuleSync.class).status().lastSync()).as("rules read").isNotNull();
                });
    }

    @Test
    void autoModeLimitsInMemoryUntilRedisAnswersThenMovesToRedisForGood(CapturedOutput output) {
        try (RedisServer late = RedisServers.start()) {
            late.kill();
            // A timeout far above the default 5 ms: the first script call on a fresh connection (the script loaded
            // again) may take longer on a busy machine, and this test is about where buckets live, not the timeout.
            runner.withPropertyValues("spring.data.redis.url=" + late.url(), "ratelimit.store.timeout=2s",
                    "ratelimit.store.startup-probe-timeout=300ms", "ratelimit.store.reconnect-max-delay=100ms")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        MemoryUntilShared store = (MemoryUntilShared) context.getBean(RateLimitStore.class);
                        assertThat(store.onShared()).as("Redis is not there yet").isFalse();
                        assertThat(decide(store).source()).isEqualTo(Verdict.Source.LOCAL);

                        late.restart();
                        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                        while (!store.onShared() && System.nanoTime() < deadline) {
                            Thread.sleep(20);
                        }
                        assertThat(store.onShared()).as("moved to Redis once it answered").isTrue();
                        assertThat(decide(store).source()).isEqualTo(Verdict.Source.STORE);
                        assertThat(late.command("KEYS", "rl:*")).contains("auto-mode");
                    });
        }
        assertThat(output).containsOnlyOnce("Redis is not reachable");
        assertThat(output).contains("kept in this instance's memory until it answers");
        assertThat(output).containsOnlyOnce("rate limits are now shared by every instance");
    }

    /**
     * What Testcontainers' {@code @ServiceConnection} and Spring Boot's Docker Compose support contribute: a
     * {@code DataRedisConnectionDetails} bean, which wins over the properties, and the limiter's own connection goes
     * where it says (here the properties point at a port nobody listens on).
     */
    @Test
    void aRedisConnectionDetailsBeanIsWhereTheLimitersConnectionGoes() throws IOException {
        runner.withPropertyValues("spring.data.redis.url=redis://127.0.0.1:" + closedPort(), "ratelimit.store.type=redis",
                "ratelimit.store.timeout=2s")
                .withBean(DataRedisConnectionDetails.class,
                        () -> new DataRedisConnectionDetails() {
                            @Override
                            public Standalone getStandalone() {
                                return Standalone.of(redis.host(), redis.port());
                            }
                        })
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(LettuceConnectionFactory.class).getPort()).isEqualTo(redis.port());
                    LimiterConnection connection = context.getBean(LimiterConnection.class);
                    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                    while (!connection.connected() && System.nanoTime() < deadline) {
                        Thread.sleep(20);
                    }
                    assertThat(decide(context.getBean(RateLimitStore.class)).source()).isEqualTo(Verdict.Source.STORE);
                    assertThat(redis.command("KEYS", "rl:*")).contains("auto-mode");
                });
    }

    private static Verdict decide(RateLimitStore store) {
        Rule rule = new Rule("auto-mode", "auto-mode", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("auto-mode.", 10, 10, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        return store.evaluate(List.of(new Check(rule, new BucketKey(ClientIds.unkeyed().of("client"), "auto-mode"), 1, false)))
                .block(Duration.ofSeconds(5));
    }

    @Test
    void theRedisTopologySettingOverridesWhatTheConnectionShows() {
        runner.withPropertyValues("spring.data.redis.url=" + redis.url()).run(context -> assertThat(
                context.getBean(RateLimitRedis.class).cluster()).as("auto, on a single Redis").isFalse());
        // A cluster behind a proxy that routes by key looks like one server: every script must keep to one slot.
        runner.withPropertyValues("spring.data.redis.url=" + redis.url(), "ratelimit.store.redis-topology=cluster",
                "ratelimit.store.timeout=2s").run(context -> {
                    assertThat(context.getBean(RateLimitRedis.class).cluster()).isTrue();
                    assertThat(decide(context.getBean(RateLimitStore.class)).source()).as("decided by Redis")
                            .isEqualTo(Verdict.Source.STORE);
                });
    }

    @Test
    void standaloneOnAClusterConnectionIsRefusedByName() {
        LettuceConnectionFactory cluster = new LettuceConnectionFactory(
                new RedisClusterConfiguration(List.of("127.0.0.1:7000")));
        assertThat(RedisLocation.splitBySlot(cluster, StoreProperties.RedisTopology.AUTO)).isTrue();
        assertThatThrownBy(() -> RedisLocation.splitBySlot(cluster, StoreProperties.RedisTopology.STANDALONE))
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("ratelimit.store.redis-topology is standalone, but Redis is configured as a "
                        + "cluster");
    }

    @Test
    void redisModeKeepsRedisEvenWhenItIsDownAtStartup() throws IOException {
        runner.withPropertyValues("spring.data.redis.url=redis://127.0.0.1:" + closedPort(),
                "ratelimit.store.type=redis").run(context ->
                        assertThat(context.getBean(RateLimitStore.class).find(FailSafeStore.class)).isPresent());
    }

    @Test
    void memoryModeSwitchesRedisOff() {
        runner.withPropertyValues("spring.data.redis.url=" + redis.url(), "ratelimit.store.type=memory").run(context -> {
            assertThat(context).doesNotHaveBean(RedisKeys.class);
            assertThat(context).getBean(RateLimitStore.class).isInstanceOf(LocalBucketStore.class);
        });
    }

    @Test
    void aUserStoreMakesOursBackOff() {
        runner.withPropertyValues("spring.data.redis.url=" + redis.url())
                .withUserConfiguration(UserStore.class)
                .run(context -> {
                    assertThat(context.getBean(RateLimitStore.class)).isSameAs(context.getBean("myStore"));
                    assertThat(context).as("no stack of ours beside the application's store")
                            .doesNotHaveBean(StoreStack.class);
                });
    }

    @Test
    void withoutSpringDataRedisOnTheClasspathBucketsLiveInMemory() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitRedisAutoConfiguration.class,
                        RateLimitAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader(LettuceConnectionFactory.class))
                .run(context -> {
                    assertThat(context).doesNotHaveBean(RedisKeys.class);
                    assertThat(context).getBean(RateLimitStore.class).isInstanceOf(LocalBucketStore.class);
                });
    }

    @Test
    void switchedOffThereIsNoStore() {
        runner.withPropertyValues("spring.data.redis.url=" + redis.url(), "ratelimit.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(RateLimitStore.class));
    }

    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserStore {

        @Bean
        RateLimitStore myStore() {
            return checks -> Mono.empty();
        }
    }
}
