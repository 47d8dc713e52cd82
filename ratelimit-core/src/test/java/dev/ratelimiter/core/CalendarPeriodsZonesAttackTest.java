package dev.ratelimiter.core;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * r35c: periods in zones with odd clock changes — 30-minute DST (Australia/Lord_Howe), midnight skipped (America/
 * Santiago, America/Havana, Asia/Beirut), a skipped day (Pacific/Apia, 2011-12-30), Ramadan DST (Africa/Casablanca):
 * every instant lies in exactly one period, the periods tile time without gap or overlap.
 */
class CalendarPeriodsZonesAttackTest {

    private static final List<String> ZONES = List.of("Australia/Lord_Howe", "America/Santiago", "America/Havana",
            "Asia/Beirut", "Pacific/Apia", "Africa/Casablanca", "America/Sao_Paulo", "Asia/Tehran", "Europe/Berlin");

    @Test
    void periodsTileTimeInZonesWithOddClockChanges() {
        Instant from = Instant.parse("2011-01-01T00:00:00Z");
        Instant to = Instant.parse("2027-01-01T00:00:00Z");
        for (String id : ZONES) {
            ZoneId zone = ZoneId.of(id);
            for (CalendarPeriods.Unit unit : CalendarPeriods.Unit.values()) {
                int[] anchors = unit == CalendarPeriods.Unit.MONTH ? new int[] { 1, 29, 30, 31 } : new int[] { 1 };
                for (int anchor : anchors) {
                    CalendarPeriods.Span span = CalendarPeriods.spanAt(from, unit, zone, anchor, DayOfWeek.SUNDAY);
                    while (span.start().isBefore(to)) {
                        assertThat(span.end()).as(id + " " + unit + " " + anchor + " " + span).isAfter(span.start());
                        assertThat(span.length()).as(id + " " + unit + " " + span).isGreaterThan(Duration.ofHours(20));
                        Instant last = span.end().minusNanos(1);
                        assertThat(CalendarPeriods.spanAt(last, unit, zone, anchor, DayOfWeek.SUNDAY))
                                .as(id + " " + unit + " " + anchor + " last instant of " + span).isEqualTo(span);
                        CalendarPeriods.Span next = CalendarPeriods.spanAt(span.end(), unit, zone, anchor,
                                DayOfWeek.SUNDAY);
                        assertThat(next.start()).as(id + " " + unit + " " + anchor + " after " + span)
                                .isEqualTo(span.end());
                        span = next;
                    }
                }
            }
        }
    }
}
