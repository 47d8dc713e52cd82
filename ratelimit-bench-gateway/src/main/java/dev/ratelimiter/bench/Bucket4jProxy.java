package dev.ratelimiter.bench;

import java.time.Duration;

import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.cloud.gateway.filter.ratelimit.Bucket4jRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;

/**
 * What Spring Cloud Gateway's {@code Bucket4jRateLimiter} needs: an async proxy manager keeping buckets in Redis,
 * compare-and-swap over Lettuce (Bucket4j's own Redis integration), buckets expiring once refilled. Only for
 * {@code bench.limiter=scg-bucket4j}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "bench.limiter", havingValue = "scg-bucket4j")
class Bucket4jProxy {

    @Bean(destroyMethod = "shutdown")
    RedisClient bucket4jRedisClient(@Value("${spring.data.redis.url}") String url) {
        return RedisClient.create(url);
    }

    @Bean(destroyMethod = "close")
    StatefulRedisConnection<String, byte[]> bucket4jConnection(RedisClient bucket4jRedisClient) {
        return bucket4jRedisClient.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
    }

    /**
     * The gateway's default rate limiter in this case: with Spring Data Redis present, SCG also makes a
     * RedisRateLimiter, and its RequestRateLimiter factory needs exactly one default.
     */
    @Bean
    @Primary
    Bucket4jRateLimiter primaryBucket4jRateLimiter(AsyncProxyManager<String> bucket4jProxyManager,
            ConfigurationService configurationService) {
        return new Bucket4jRateLimiter(bucket4jProxyManager, configurationService);
    }

    @Bean
    AsyncProxyManager<String> bucket4jProxyManager(StatefulRedisConnection<String, byte[]> bucket4jConnection) {
        return Bucket4jLettuce.casBasedBuilder(bucket4jConnection)
                .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(
                        Duration.ofSeconds(10)))
                .build().asAsync();
    }
}
