package dev.ratelimiter.kafka;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;

import dev.ratelimiter.core.DecisionEvent;
import dev.ratelimiter.core.DecisionEventJson;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** r35c: an event read back for a what-if replay keeps the abuse factor it was written with. */
class DecisionEventReadingAbuseFactorTest {

    @Test
    void theAbuseFactorIsReadBack() {
        DecisionEvent written = new DecisionEvent(Instant.parse("2026-12-01T10:00:00Z"), "abuser", "free", "api",
                "default", DecisionEvent.Verdict.ALLOWED, "evaluated", "store", "free.default", 10, 5, List.of(), null,
                null, "gw-1", "eu", 0.1);
        DecisionEvent read = DecisionEventReading.parse(DecisionEventJson.write(written), new HashMap<>());
        assertThat(read).as(DecisionEventJson.write(written)).isNotNull();
        assertThat(read.abuseFactor()).isEqualTo(0.1);
    }
}
