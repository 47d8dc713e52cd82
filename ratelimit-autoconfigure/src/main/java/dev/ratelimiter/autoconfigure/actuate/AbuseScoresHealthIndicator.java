package dev.ratelimiter.autoconfigure.actuate;

import dev.ratelimiter.core.AbuseScores;
import dev.ratelimiter.kafka.AbuseScoreListener;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The abuse scores ({@code abuseScores}): how many clients are scaled, whether the score topic is read. Always UP: a
 * gateway without its scores limits by the configured limits (or the last scores, decaying), which is no reason to
 * take it out of service.
 */
public final class AbuseScoresHealthIndicator implements HealthIndicator {

    private final AbuseScores scores;
    private final AbuseScoreListener listener;
    private final String topic;

    public AbuseScoresHealthIndicator(AbuseScores scores, AbuseScoreListener listener, String topic) {
        this.scores = scores;
        this.listener = listener;
        this.topic = topic;
    }

    @Override
    public Health health() {
        Health.Builder health = Health.up()
                .withDetail("topic", topic)
                .withDetail("scaledClients", scores.scaledClients())
                .withDetail("heldClients", scores.held())
                .withDetail("topicRead", listener.caughtUp())
                .withDetail("recordsApplied", listener.applied())
                .withDetail("recordsSkipped", listener.skipped());
        if (listener.topicMissing()) {
            health.withDetail("problem", "the topic " + topic + " does not exist: limits stay as configured until "
                    + "it does (create it with cleanup.policy=compact)");
        }
        else if (listener.problem() != null) {
            health.withDetail("problem", "Kafka cannot be read (" + listener.problem() + "): the scores held stay, "
                    + "decaying");
        }
        return health.build();
    }
}
