package dev.ratelimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A forged record on the abuse-score topic stamped at the far past ({@code "at": -9223372036854775808}, epoch
 * milliseconds, which the JSON reader takes): the decay's {@code Duration.toMillis()} overflowed inside
 * {@link AbuseScores#apply} after the client had been taken out of the eviction order but not out of the scores. Its
 * earlier score stayed in force, unlisted for operators and never evicted, and repeating it grew the scores past
 * {@code max-clients}.
 */
class AbuseScoresForgedTimeTest {

    private static final Instant NOW = Instant.parse("2026-12-05T12:00:00Z");
    private static final Instant FAR_PAST = Instant.ofEpochMilli(Long.MIN_VALUE);

    private final AbuseScores scores = new AbuseScores(new AbuseScores.Settings(0.1, Duration.ofMinutes(10), 2,
            Set.of(), Set.of()), Clock.fixed(NOW, ZoneOffset.UTC));

    @Test
    void aRecordStampedAtTheFarPastNeitherFailsNorEscapesTheBound() {
        for (int i = 0; i < 10; i++) {
            String client = "client-" + i;
            scores.apply(client, new AbuseScore(1.0, null, "rollup", NOW, null));
            Throwable failure = catchThrowable(() -> scores.apply(client, new AbuseScore(1.0, null, "forged",
                    FAR_PAST, null)));
            assertThat(failure).as("a record is applied or skipped, never an arithmetic failure").isNull();
        }
        assertThat(scores.held()).as("at most max-clients scores held").isLessThanOrEqualTo(2);
        for (int i = 0; i < 10; i++) {
            if (scores.factorFor("client-" + i) < 1) {
                assertThat(scores.views(100)).as("a score in force is listed for operators")
                        .extracting(AbuseScores.View::client).contains("client-" + i);
            }
        }
    }
}
