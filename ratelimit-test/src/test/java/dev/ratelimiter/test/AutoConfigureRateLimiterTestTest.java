package dev.ratelimiter.test;

import java.time.Duration;

import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.autoconfigure.RateLimitRedisAutoConfiguration;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.RuleStore;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The annotation on a test of an application that is configured for Redis: the limiter decides on {@link TestBuckets}
 * with its Redis wiring off, the application's own test properties still apply, and every test method starts with
 * full buckets (the methods run in order: the first spends the burst, the second finds it full).
 */
@SpringJUnitConfig
@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DataRedisReactiveAutoConfiguration.class,
        RateLimitRedisAutoConfiguration.class, RateLimitAutoConfiguration.class })
@AutoConfigureRateLimiterTest
// as an application would have it: Redis configured (nothing listens there; store.type is auto), a tier of 3
@TestPropertySource(properties = { "spring.data.redis.url=redis://127.0.0.1:1",
        "ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.capacity=3",
        "ratelimit.tiers.free.limits.default.refill-tokens=1", "ratelimit.tiers.free.limits.default.refill-period=1h" })
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AutoConfigureRateLimiterTestTest {

    @Autowired
    ApplicationContext context;

    @Autowired
    RateLimitEvaluator evaluator;

    @Autowired
    TestBuckets buckets;

    @Test
    @Order(1)
    void theLimiterDecidesOnTheTestBucketsWithoutRedis() {
        assertThat(context.getBean(RateLimitStore.class)).isSameAs(buckets);
        assertThat(context.getBeanNamesForType(RateLimitRedisAutoConfiguration.class)).isEmpty();
        assertThat(context.getBean(RuleStore.class)).isInstanceOf(InMemoryRuleStore.class);
        assertThat(allowed()).isTrue();
        assertThat(allowed()).isTrue();
        assertThat(allowed()).isTrue();
        assertThat(allowed()).as("the fourth of a burst of 3").isFalse();
    }

    @Test
    @Order(2)
    void theNextTestMethodStartsWithFullBuckets() {
        assertThat(allowed()).isTrue();
        assertThat(allowed()).isTrue();
        assertThat(allowed()).isTrue();
        assertThat(allowed()).isFalse();
    }

    private boolean allowed() {
        RequestAttributes request = new RequestAttributes("some-key", null, null, "10.0.0.1", "api", "/api/x", null,
                "free", 1);
        return evaluator.check(request, new RequestPermits()).block(Duration.ofSeconds(5)).allowed();
    }
}
