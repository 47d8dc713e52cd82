package dev.ratelimiter.core;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The last minute's fallback share, read after a minute without decisions: none in the window, so nothing (it
 * reported an outage long past as the last minute's). Found by the attack review of issue 30.
 */
class RecentFallbacksTest {

    @Test
    void aQuietMinuteAfterAnOutageReportsNoFallbacksInTheLastMinute() {
        AtomicLong clock = new AtomicLong(TimeUnit.HOURS.toNanos(1));
        RecentFallbacks recent = new RecentFallbacks(clock::get);
        for (int i = 0; i < 1_000; i++) {
            recent.record(FallbackReason.BREAKER_OPEN); // an outage
        }
        clock.addAndGet(TimeUnit.SECONDS.toNanos(90)); // then no exact decision for 90 s (night, or a route idle)
        RecentFallbacks.Window minute = recent.lastMinute();
        assertThat(minute.fallbacks()).as("fallbacks in the last minute").isZero();
        assertThat(minute.share()).as("ratelimit.store.fallback.share, alerted on above 0.001").isZero();
    }
}
