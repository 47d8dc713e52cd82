package dev.ratelimiter.core;

import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A calendar quota in this JVM's memory (the in-memory store, and the fallback's buckets while Redis cannot answer):
 * the store's clock, whatever its origin, is read as the wall-clock time it stood for when the store was made, so the
 * count is per calendar period and the whole quota is back at midnight, not 24 hours after the first request; what the
 * fallback counted is owed to the store for the period in progress only.
 */
class CalendarQuotaInMemoryTest {

    private static final Rule DAILY = new Rule("daily", "daily", Match.ANY, List.of(Dimension.API_KEY),
            CalendarQuotaLimit.of("daily.", 3, "day", "UTC", null, null), 0, Mode.ENFORCE, FailureMode.LOCAL);

    /** A store on a clock the test moves, and the next midnight UTC on that clock (within the test's own run). */
    private final AtomicLong clock = new AtomicLong(TimeUnit.DAYS.toNanos(3));
    private final long wallBefore = System.currentTimeMillis();
    private final LocalBucketStore store = new LocalBucketStore(100, clock::get);
    private final long wallAfter = System.currentTimeMillis();
    private final long midnightOnClock = clock.get() + TimeUnit.MILLISECONDS.toNanos(LocalDate.ofEpochDay(
            Math.floorDiv(wallBefore, 86_400_000L) + 1).atStartOfDay().toInstant(ZoneOffset.UTC).toEpochMilli()
            - wallBefore);

    private Check check(String client) {
        return new Check(DAILY, new BucketKey(client, "daily"), 1, false);
    }

    private RuleOutcome decide(String client) {
        return store.evaluateNow(List.of(check(client))).outcomes().get(0);
    }

    @Test
    void theQuotaIsBackAtMidnightOnTheStoresClock() {
        // the store was made within these milliseconds: a second either side of midnight is unambiguous
        assertThat(wallAfter - wallBefore).isLessThan(1_000);
        clock.set(midnightOnClock - TimeUnit.SECONDS.toNanos(2));
        assertThat(List.of(decide("a").allowed(), decide("a").allowed(), decide("a").allowed(), decide("a").allowed()))
                .containsExactly(true, true, true, false);
        RuleOutcome refused = decide("a");
        assertThat(refused.retryAfter()).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(3));
        assertThat(refused.resetAfter()).isEqualTo(refused.retryAfter());
        clock.set(midnightOnClock + TimeUnit.SECONDS.toNanos(2));
        RuleOutcome next = decide("a");
        assertThat(next.allowed()).isTrue();
        assertThat(next.remaining()).isEqualTo(2);
        assertThat(next.resetAfter()).isBetween(Duration.ofHours(24).minusSeconds(3), Duration.ofHours(24));
    }

    @Test
    void theFallbackOwesWhatItCountedInThePeriodInProgressOnly() {
        clock.set(midnightOnClock - TimeUnit.HOURS.toNanos(1));
        Check check = check("b");
        store.startFrom(check, 2, 1.0, clock.get());
        assertThat(decide("b").remaining()).as("the store's count carried on").isEqualTo(1);
        assertThat(decide("b").remaining()).isZero();
        assertThat(decide("b").allowed()).isFalse();
        assertThat(store.settleOwed(check)).isEqualTo(new BucketState.Owed(2, 0));
        assertThat(store.settleOwed(check)).as("owed once").isEqualTo(BucketState.Owed.NOTHING);
        store.follow(check, 0, 1.0);
        store.charged(check.bucket(), 2);
        clock.set(midnightOnClock + TimeUnit.SECONDS.toNanos(1));
        assertThat(decide("b").remaining()).as("a new day").isEqualTo(2);
        clock.set(midnightOnClock + TimeUnit.HOURS.toNanos(25));
        assertThat(store.settleOwed(check)).as("spent on a day that has ended: owed to nobody")
                .isEqualTo(BucketState.Owed.NOTHING);
    }
}
