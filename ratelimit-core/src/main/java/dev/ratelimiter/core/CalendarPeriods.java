package dev.ratelimiter.core;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;

/**
 * Where the calendar period holding an instant starts and ends, in a time zone: a day from midnight to midnight (23
 * or 25 hours across a daylight-saving change), a week from its first day, a month from its anchor day (a billing
 * cycle: a month shorter than the anchor day starts the period on its last day). Pure {@code java.time}: the Redis
 * script cannot do time zones, so the gateway computes these bounds and sends them with each call.
 */
public final class CalendarPeriods {

    private CalendarPeriods() {
    }

    /** The calendar unit a quota renews with. */
    public enum Unit {
        DAY, WEEK, MONTH
    }

    /**
     * One period: {@code [start, end)}.
     *
     * @param start the first instant of the period
     * @param end the first instant of the next period
     */
    public record Span(Instant start, Instant end) {

        public boolean contains(Instant at) {
            return !at.isBefore(start) && at.isBefore(end);
        }

        public Duration length() {
            return Duration.between(start, end);
        }
    }

    /**
     * The period of {@code unit} holding {@code at} in {@code zone}.
     *
     * @param anchorDay months: the day of the month a period starts on (1..31), else ignored
     * @param weekStart weeks: the first day of a week, else ignored
     */
    public static Span spanAt(Instant at, Unit unit, ZoneId zone, int anchorDay, DayOfWeek weekStart) {
        LocalDate date = LocalDate.ofInstant(at, zone);
        LocalDate first;
        LocalDate next;
        switch (unit) {
            case DAY -> {
                first = date;
                next = date.plusDays(1);
            }
            case WEEK -> {
                first = date.with(TemporalAdjusters.previousOrSame(weekStart));
                next = first.plusWeeks(1);
            }
            default -> {
                YearMonth month = YearMonth.from(date);
                LocalDate anchorThisMonth = anchored(month, anchorDay);
                first = date.isBefore(anchorThisMonth) ? anchored(month.minusMonths(1), anchorDay) : anchorThisMonth;
                next = anchored(YearMonth.from(first).plusMonths(1), anchorDay);
            }
        }
        // atStartOfDay(zone), not midnight: where a daylight-saving change skips midnight, the day starts at the first
        // instant that exists.
        return new Span(first.atStartOfDay(zone).toInstant(), next.atStartOfDay(zone).toInstant());
    }

    /** The anchor day in {@code month}, or its last day when the month is shorter. */
    static LocalDate anchored(YearMonth month, int anchorDay) {
        return month.atDay(Math.min(anchorDay, month.lengthOfMonth()));
    }
}
