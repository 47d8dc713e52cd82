package dev.ratelimiter.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.test.context.TestPropertySource;

/**
 * On a gateway's own {@code @SpringBootTest}: the rate limiter decides as configured, but on in-memory
 * {@link TestBuckets} (autowire them) instead of Redis, so that "this route gives 429 after N" can be asserted with no
 * Redis running. The buckets' clock stands still unless the test moves it ({@link TestBuckets#advance}), and every
 * bucket is full again before each test method.
 *
 * <p>What is not tested this way: Redis itself (the Lua scripts, sharing between instances, the fallback); for those,
 * run the test against a real Redis (Testcontainers' {@code @ServiceConnection}, README "Testing your gateway").
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
// memory: the limiter's Redis wiring stays off, whatever the application's own configuration says
@TestPropertySource(properties = "ratelimit.store.type=memory")
public @interface AutoConfigureRateLimiterTest {
}
