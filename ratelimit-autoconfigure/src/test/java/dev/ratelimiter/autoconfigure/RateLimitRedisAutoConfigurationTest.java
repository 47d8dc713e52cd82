package dev.ratelimiter.autoconfigure;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

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
            assertThat(context.getBean(RedisKeys.class).pattern()).isEqualTo("rl:*");
        });
    }

    @Test
    void autoModeWithoutRedisLimitsInMemoryAndSaysSoOnce(CapturedOutput output) throws IOException {
        runner.withPropertyValues("spring.data.redis.url=redis://127.0.0.1:" + closedPort(),
                "ratelimit.store.startup-probe-timeout=1s").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).getBean(RateLimitStore.class).isInstanceOf(LocalBucketStore.class);
                });
        assertThat(output).containsOnlyOnce("Redis is not reachable");
        assertThat(output).contains("rate limits and runtime rules are kept in this instance's memory only");
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
                .run(context -> assertThat(context.getBean(RateLimitStore.class)).isSameAs(context.getBean("myStore")));
    }

    @Test
    void withoutSpringDataRedisOnTheClasspathBucketsLiveInMemory() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitRedisAutoConfiguration.class,
                        RateLimitAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader(ReactiveStringRedisTemplate.class))
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
