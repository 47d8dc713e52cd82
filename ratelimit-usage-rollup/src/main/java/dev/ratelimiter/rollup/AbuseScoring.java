package dev.ratelimiter.rollup;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;

/**
 * The abuse scores the rollup computes and publishes for the gateways to lower abusive clients' limits with (off
 * unless {@code ABUSE_TOPIC} is set). Per client, per tumbling {@code ABUSE_WINDOW} of event time:
 *
 * <pre>
 * excess   = max(0, 1 − Σ over admitted requests of 1/abuseFactor ÷ requests)
 * refusals = clamp((excess − ABUSE_RATIO_FROM) ÷ (ABUSE_RATIO_TO − ABUSE_RATIO_FROM), 0, 1)
 * pressure = min(1, requests ÷ (the largest limit seen ÷ its abuseFactor))
 * score    = refusals × pressure, or 0 under ABUSE_MIN_REQUESTS requests
 * </pre>
 *
 * {@code excess} is the share of requests the client's whole limits would have refused: each request admitted under a
 * lowered limit stands for 1/factor of the whole one, so a client that calmed down is not held down by the refusals
 * its lowered limit causes (no feedback loop). {@code pressure} spares a client that sent less than one limit's worth
 * in the window. A score of at least {@value #MIN_PUBLISHED} is published, keyed by the client.
 *
 * @param topic where scores go (the gateways' {@code ratelimit.abuse.kafka.topic}), or null: no scoring
 * @param window the window a score is computed over
 * @param minRequests fewer requests in a window score 0
 * @param ratioFrom the excess at and below which the score is 0
 * @param ratioTo the excess at and above which the score is 1
 */
public record AbuseScoring(String topic, Duration window, long minRequests, double ratioFrom, double ratioTo) {

    /** Scores below this are not published: noise, which the gateways would forget anyway. */
    static final double MIN_PUBLISHED = 0.05;

    public AbuseScoring {
        if (window.toMillis() < 1000) {
            throw new IllegalArgumentException("ABUSE_WINDOW must be at least 1s, was " + window);
        }
        if (!(ratioFrom >= 0 && ratioFrom < ratioTo && ratioTo <= 1)) {
            throw new IllegalArgumentException("ABUSE_RATIO_FROM (" + ratioFrom + ") must be below ABUSE_RATIO_TO ("
                    + ratioTo + "), both between 0 and 1");
        }
    }

    /** From system properties, then environment variables; null without {@code ABUSE_TOPIC}. */
    public static AbuseScoring from(Properties systemProperties, Map<String, String> environment) {
        String topic = value(systemProperties, environment, "ABUSE_TOPIC", null);
        if (topic == null) {
            return null;
        }
        return new AbuseScoring(topic, Duration.parse(value(systemProperties, environment, "ABUSE_WINDOW", "PT1M")),
                Long.parseLong(value(systemProperties, environment, "ABUSE_MIN_REQUESTS", "20")),
                Double.parseDouble(value(systemProperties, environment, "ABUSE_RATIO_FROM", "0.5")),
                Double.parseDouble(value(systemProperties, environment, "ABUSE_RATIO_TO", "0.9")));
    }

    private static String value(Properties systemProperties, Map<String, String> environment, String name,
            String defaultValue) {
        String value = systemProperties.getProperty(name);
        if (value == null || value.isBlank()) {
            value = environment.get(name);
        }
        return value == null || value.isBlank() ? defaultValue : value.trim();
    }

    /** The score of one client's window. */
    double score(ClientConduct conduct) {
        if (conduct.requests() < minRequests || conduct.requests() == 0) {
            return 0;
        }
        double excess = Math.max(0, 1 - conduct.admittedWhole() / conduct.requests());
        double refusals = Math.max(0, Math.min(1, (excess - ratioFrom) / (ratioTo - ratioFrom)));
        double pressure = conduct.largestWholeLimit() > 0
                ? Math.min(1, conduct.requests() / conduct.largestWholeLimit()) : 1;
        return refusals * pressure;
    }
}
