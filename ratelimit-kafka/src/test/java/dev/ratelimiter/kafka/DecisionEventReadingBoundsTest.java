package dev.ratelimiter.kafka;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.DecisionEvent;
import dev.ratelimiter.core.DecisionEventJson;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A what-if replay holds every event of its range until it has sorted them (up to {@code max-events}, 500,000 by
 * default), in the gateway's own JVM. The bound counted records, not their size: a forged decision event may carry a
 * client (route, rule, reason...) of up to a Kafka record's megabyte, each distinct, so a range of forged events held
 * hundreds of gigabytes. A real event's text fields are short (a client id is 22 characters): one of absurd length is
 * malformed, counted and skipped.
 */
class DecisionEventReadingBoundsTest {

    private static String event(String client, String route) {
        return DecisionEventJson.write(new DecisionEvent(Instant.parse("2026-12-05T12:00:00Z"), client, "free", route,
                "default", DecisionEvent.Verdict.ALLOWED, null, "redis", "free.default", 10, 9, List.of(), null, null,
                "gw-1", null));
    }

    @Test
    void aRealEventIsReadAndAnAbsurdlyLongFieldIsMalformed() {
        Map<String, String> shared = new HashMap<>();
        assertThat(DecisionEventReading.parse(event("3q2-7wEX4t6Yk0cQv1mT9w", "api"), shared)).isNotNull();
        assertThat(DecisionEventReading.parse(event("x".repeat(900_000), "api"), shared) == null)
                .as("a 900 KB client is malformed").isTrue();
        assertThat(DecisionEventReading.parse(event("3q2-7wEX4t6Yk0cQv1mT9w", "r".repeat(900_000)), shared) == null)
                .as("a 900 KB route is malformed").isTrue();
        assertThat(shared.values().stream().mapToInt(String::length).max().orElse(0)).as("longest value held")
                .isLessThan(10_000);
    }
}
