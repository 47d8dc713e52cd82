package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.context.annotation.Bean;

/**
 * What the limiter needs from the application's Lettuce client: to be back on Redis soon after Redis is. Lettuce's
 * reconnect delay doubles up to 30 s, so after an outage of a minute an instance could keep deciding from its fallback
 * share for tens of seconds with Redis healthy again; {@code ratelimit.store.reconnect-max-delay} caps it.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass({ ClientResources.class, ClientResourcesBuilderCustomizer.class })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitRedisClientAutoConfiguration {

    /** First reconnect attempts come quickly: a Redis restart or failover is often over within a second. */
    static final Duration FIRST_RECONNECT_DELAY = Duration.ofMillis(10);

    @Bean
    ClientResourcesBuilderCustomizer rateLimitReconnectDelay(RateLimitProperties properties) {
        Duration max = properties.getStore().getReconnectMaxDelay();
        return builder -> {
            if (max != null && !max.isZero() && !max.isNegative()) {
                // equal jitter: many gateways that lost Redis together do not all knock at the same moment
                builder.reconnectDelay(Delay.equalJitter(FIRST_RECONNECT_DELAY, max, FIRST_RECONNECT_DELAY.toMillis(),
                        TimeUnit.MILLISECONDS));
            }
        };
    }
}
