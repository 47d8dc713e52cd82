package dev.ratelimiter.autoconfigure;

import java.time.Clock;

import dev.ratelimiter.autoconfigure.rules.AbuseScoreOperations;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.core.AbuseScores;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationContext;
import org.springframework.util.ClassUtils;

/**
 * The abuse scores' part of the rules API, where abuse scores are on ({@code ratelimit.abuse.enabled}); publishing
 * through the score topic where it is configured. The management context is a child of the application's, so its
 * beans are seen from there. Used by both flavours' rules API configurations.
 */
public final class AbuseScoreApi {

    private static final boolean KAFKA = ClassUtils.isPresent("org.apache.kafka.clients.producer.KafkaProducer",
            AbuseScoreApi.class.getClassLoader());

    private AbuseScoreApi() {
    }

    public static @Nullable AbuseScoreOperations of(ApplicationContext context, RulesApiOperations rules) {
        AbuseScores scores = context.getBeanProvider(AbuseScores.class).getIfAvailable();
        if (scores == null) {
            return null;
        }
        return new AbuseScoreOperations(rules, scores, KAFKA ? publisher(context) : null, Clock.systemUTC());
    }

    private static dev.ratelimiter.kafka.@Nullable AbuseScorePublisher publisher(ApplicationContext context) {
        ObjectProvider<dev.ratelimiter.kafka.AbuseScorePublisher> publishers = context
                .getBeanProvider(dev.ratelimiter.kafka.AbuseScorePublisher.class);
        return publishers.getIfAvailable();
    }
}
