package dev.ratelimiter.core;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.stream.Stream;

import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The calendar periods a quota renews with: daylight-saving days of 23 and 25 hours, weeks from their first day,
 * billing months with an anchor day clamped to short months (leap February), and for any instant in any zone a
 * period that holds it and that the next one starts exactly where it ends.
 */
class CalendarPeriodsTest {

    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final ZoneId UTC = ZoneId.of("UTC");

    private static Instant at(String localDateTime, ZoneId zone) {
        return LocalDateTime.parse(localDateTime).atZone(zone).toInstant();
    }

    private static CalendarPeriods.Span day(Instant at, ZoneId zone) {
        return CalendarPeriods.spanAt(at, CalendarPeriods.Unit.DAY, zone, 1, DayOfWeek.MONDAY);
    }

    private static CalendarPeriods.Span month(Instant at, ZoneId zone, int anchorDay) {
        return CalendarPeriods.spanAt(at, CalendarPeriods.Unit.MONTH, zone, anchorDay, DayOfWeek.MONDAY);
    }

    @Test
    void theDayClocksGoForwardHas23Hours() {
        CalendarPeriods.Span span = day(at("2026-03-29T12:00", BERLIN), BERLIN);
        assertThat(span.start()).isEqualTo(Instant.parse("2026-03-28T23:00:00Z"));
        assertThat(span.end()).isEqualTo(Instant.parse("2026-03-29T22:00:00Z"));
        assertThat(span.length()).isEqualTo(Duration.ofHours(23));
        // 01:59:59 and 03:00 local are one second apart and in the same day
        assertThat(day(Instant.parse("2026-03-29T00:59:59Z"), BERLIN)).isEqualTo(span);
        assertThat(day(Instant.parse("2026-03-29T01:00:00Z"), BERLIN)).isEqualTo(span);
    }

    @Test
    void theDayClocksGoBackHas25Hours() {
        CalendarPeriods.Span span = day(at("2026-10-25T12:00", BERLIN), BERLIN);
        assertThat(span.start()).isEqualTo(Instant.parse("2026-10-24T22:00:00Z"));
        assertThat(span.end()).isEqualTo(Instant.parse("2026-10-25T23:00:00Z"));
        assertThat(span.length()).isEqualTo(Duration.ofHours(25));
        // both 02:30s of that night are in it
        assertThat(span.contains(Instant.parse("2026-10-25T00:30:00Z"))).isTrue();
        assertThat(span.contains(Instant.parse("2026-10-25T01:30:00Z"))).isTrue();
    }

    @Test
    void aDayEndsAtMidnightInItsZoneNotAfter24HoursOfUtc() {
        assertThat(day(Instant.parse("2026-03-29T21:59:59.999999Z"), BERLIN).end())
                .isEqualTo(Instant.parse("2026-03-29T22:00:00Z"));
        assertThat(day(Instant.parse("2026-03-29T22:00:00Z"), BERLIN).start())
                .isEqualTo(Instant.parse("2026-03-29T22:00:00Z"));
        assertThat(day(Instant.parse("2026-03-29T22:00:00Z"), UTC).start())
                .isEqualTo(Instant.parse("2026-03-29T00:00:00Z"));
    }

    @Test
    void aDayWhoseMidnightDoesNotExistStartsAtItsFirstInstant() {
        // Santiago de Chile moved its clocks from 24:00 to 01:00 on 2026-09-06: that day has no midnight.
        ZoneId santiago = ZoneId.of("America/Santiago");
        CalendarPeriods.Span span = day(at("2026-09-06T12:00", santiago), santiago);
        assertThat(span.start()).isEqualTo(ZonedDateTime.of(LocalDate.of(2026, 9, 6).atTime(1, 0), santiago)
                .toInstant());
        assertThat(span.length()).isEqualTo(Duration.ofHours(23));
    }

    @Test
    void aWeekStartsOnItsFirstDay() {
        Instant thursday = at("2026-10-29T10:00", BERLIN);
        CalendarPeriods.Span monday = CalendarPeriods.spanAt(thursday, CalendarPeriods.Unit.WEEK, BERLIN, 1,
                DayOfWeek.MONDAY);
        assertThat(monday.start()).isEqualTo(at("2026-10-26T00:00", BERLIN));
        assertThat(monday.end()).isEqualTo(at("2026-11-02T00:00", BERLIN));
        CalendarPeriods.Span sunday = CalendarPeriods.spanAt(thursday, CalendarPeriods.Unit.WEEK, BERLIN, 1,
                DayOfWeek.SUNDAY);
        assertThat(sunday.start()).isEqualTo(at("2026-10-25T00:00", BERLIN));
        // the week holding the 25-hour day
        assertThat(sunday.length()).isEqualTo(Duration.ofHours(7 * 24 + 1));
        // the first day itself belongs to the week it starts
        assertThat(CalendarPeriods.spanAt(at("2026-10-25T00:00", BERLIN), CalendarPeriods.Unit.WEEK, BERLIN, 1,
                DayOfWeek.SUNDAY)).isEqualTo(sunday);
    }

    @Test
    void aBillingMonthOnTheThirtyFirstStartsOnTheLastDayOfShorterMonths() {
        assertThat(month(at("2028-02-15T00:00", UTC), UTC, 31)).isEqualTo(new CalendarPeriods.Span(
                at("2028-01-31T00:00", UTC), at("2028-02-29T00:00", UTC)));
        // leap February's last day starts the next period, which runs to 31 March
        assertThat(month(at("2028-02-29T00:00", UTC), UTC, 31)).isEqualTo(new CalendarPeriods.Span(
                at("2028-02-29T00:00", UTC), at("2028-03-31T00:00", UTC)));
        assertThat(month(at("2028-04-30T10:00", UTC), UTC, 31)).isEqualTo(new CalendarPeriods.Span(
                at("2028-04-30T00:00", UTC), at("2028-05-31T00:00", UTC)));
        // a year that is not a leap year: 28 February
        assertThat(month(at("2027-03-01T00:00", UTC), UTC, 31).start()).isEqualTo(at("2027-02-28T00:00", UTC));
    }

    @Test
    void aBillingMonthOnTheThirtiethInLeapFebruary() {
        assertThat(month(at("2028-02-28T23:59", UTC), UTC, 30)).isEqualTo(new CalendarPeriods.Span(
                at("2028-01-30T00:00", UTC), at("2028-02-29T00:00", UTC)));
        assertThat(month(at("2028-03-01T00:00", UTC), UTC, 30)).isEqualTo(new CalendarPeriods.Span(
                at("2028-02-29T00:00", UTC), at("2028-03-30T00:00", UTC)));
    }

    @Test
    void monthsOfTheFirstAreCalendarMonthsOfEveryLength() {
        assertThat(month(at("2028-02-10T00:00", UTC), UTC, 1).length()).isEqualTo(Duration.ofDays(29));
        assertThat(month(at("2027-02-10T00:00", UTC), UTC, 1).length()).isEqualTo(Duration.ofDays(28));
        assertThat(month(at("2026-04-10T00:00", UTC), UTC, 1).length()).isEqualTo(Duration.ofDays(30));
        assertThat(month(at("2026-12-31T23:59", UTC), UTC, 1)).isEqualTo(new CalendarPeriods.Span(
                at("2026-12-01T00:00", UTC), at("2027-01-01T00:00", UTC)));
        // March in Berlin: 31 days less the hour clocks go forward
        assertThat(month(at("2026-03-10T00:00", BERLIN), BERLIN, 1).length())
                .isEqualTo(Duration.ofDays(31).minusHours(1));
    }

    record Case(Instant at, String zone, CalendarPeriods.Unit unit, int anchorDay, DayOfWeek weekStart) {
    }

    private static final String[] ZONES = { "UTC", "Europe/Berlin", "America/Santiago", "Australia/Lord_Howe",
            "Asia/Kathmandu", "Pacific/Chatham", "America/New_York", "Etc/GMT+5" };

    @TestFactory
    Stream<DynamicTest> everyInstantLiesInOnePeriodAndTheNextStartsWhereItEnds() {
        Gen<Case> cases = Gen.zip(Gen.longs(Instant.parse("2000-01-01T00:00:00Z").getEpochSecond(),
                Instant.parse("2040-01-01T00:00:00Z").getEpochSecond()), Gen.elements(ZONES),
                Gen.elements(CalendarPeriods.Unit.values()), Gen.ints(1, 31), (seconds, zone, unit, anchor) ->
                        new Case(Instant.ofEpochSecond(seconds), zone, unit, anchor,
                                DayOfWeek.of((int) Math.floorMod(seconds, 7L) + 1)));
        return Property.forAll(cases).tries(2_000).check(c -> {
            ZoneId zone = ZoneId.of(c.zone());
            CalendarPeriods.Span span = CalendarPeriods.spanAt(c.at(), c.unit(), zone, c.anchorDay(), c.weekStart());
            assertThat(span.contains(c.at())).as("%s holds %s", span, c).isTrue();
            CalendarPeriods.Span next = CalendarPeriods.spanAt(span.end(), c.unit(), zone, c.anchorDay(),
                    c.weekStart());
            assertThat(next.start()).as("the next period of %s", c).isEqualTo(span.end());
            CalendarPeriods.Span same = CalendarPeriods.spanAt(span.end().minusNanos(1), c.unit(), zone,
                    c.anchorDay(), c.weekStart());
            assertThat(same).as("its last instant, %s", c).isEqualTo(span);
            Duration length = span.length();
            switch (c.unit()) {
                case DAY -> assertThat(length).isBetween(Duration.ofHours(22), Duration.ofHours(26));
                case WEEK -> assertThat(length).isBetween(Duration.ofDays(7).minusHours(2),
                        Duration.ofDays(7).plusHours(2));
                case MONTH -> assertThat(length).isBetween(Duration.ofDays(28).minusHours(2),
                        Duration.ofDays(31).plusHours(2));
            }
        });
    }
}
