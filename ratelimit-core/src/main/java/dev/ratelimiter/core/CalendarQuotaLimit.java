package dev.ratelimiter.core;

import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Locale;

/**
 * A calendar quota: at most {@code limit} requests (or tokens) per calendar day, week or month in a time zone, all of
 * it available again at the period's boundary (midnight in the zone, the week's first day, the month's billing day).
 * Not a rate: nothing comes back before the boundary, so a refused client's retry-after is the time to it.
 *
 * <p>The store decides on its own clock: the Redis store computes the current period from the store's time and
 * keeps one counter per client and period, whose key names the period and expires at its end.
 *
 * @param limit requests (tokens) per period
 * @param unit day, week or month
 * @param zone the time zone the calendar is read in
 * @param anchorDay months: the day a period starts on (1..31; a shorter month starts it on its last day); 1 otherwise
 * @param weekStart weeks: the first day of a week; {@link DayOfWeek#MONDAY} otherwise
 */
public record CalendarQuotaLimit(long limit, CalendarPeriods.Unit unit, ZoneId zone, int anchorDay,
        DayOfWeek weekStart) implements Limit {

    /**
     * Validates; {@code source} names the settings in messages. {@code period}, {@code zone} and {@code weekStart} are
     * as written in configuration ({@code day}, {@code Europe/Berlin}, {@code sunday}); null {@code zone},
     * {@code anchorDay} and {@code weekStart} take their defaults (UTC, 1, Monday).
     */
    public static CalendarQuotaLimit of(String source, long limit, String period, String zone, Integer anchorDay,
            String weekStart) {
        if (limit < 1) {
            throw new InvalidLimitException(source + "limit", source + "limit must be at least 1 (requests allowed "
                    + "per period), but was " + limit + ".");
        }
        Bounds.amount(source + "limit", limit, "requests allowed per period");
        CalendarPeriods.Unit unit = unit(source, period);
        ZoneId zoneId = zone(source, zone);
        if (anchorDay != null && unit != CalendarPeriods.Unit.MONTH) {
            throw new InvalidLimitException(source + "anchor-day", source + "anchor-day applies to period month "
                    + "only (the day a billing month starts on), but period is " + period + "; leave it out.");
        }
        if (anchorDay != null && (anchorDay < 1 || anchorDay > 31)) {
            throw new InvalidLimitException(source + "anchor-day", source + "anchor-day must be a day of the month "
                    + "from 1 to 31 (a month shorter than it starts the period on its last day), but was "
                    + anchorDay + ".");
        }
        if (weekStart != null && unit != CalendarPeriods.Unit.WEEK) {
            throw new InvalidLimitException(source + "week-start", source + "week-start applies to period week "
                    + "only, but period is " + period + "; leave it out.");
        }
        return new CalendarQuotaLimit(limit, unit, zoneId, anchorDay == null ? 1 : anchorDay,
                weekStart == null ? DayOfWeek.MONDAY : day(source, weekStart));
    }

    private static CalendarPeriods.Unit unit(String source, String period) {
        if (period != null) {
            for (CalendarPeriods.Unit unit : CalendarPeriods.Unit.values()) {
                if (unit.name().equalsIgnoreCase(period.trim())) {
                    return unit;
                }
            }
        }
        throw new InvalidLimitException(source + "period", source + "period must be day, week or month (the "
                + "calendar period the quota renews with), but was " + (period == null ? "missing" : "'" + period
                + "'") + ".");
    }

    private static ZoneId zone(String source, String zone) {
        if (zone == null) {
            return ZoneId.of("UTC");
        }
        try {
            return ZoneId.of(zone.trim());
        }
        catch (DateTimeException ex) {
            throw new InvalidLimitException(source + "zone", source + "zone must be a time zone id such as UTC or "
                    + "Europe/Berlin (IANA), but was '" + zone + "'.");
        }
    }

    private static DayOfWeek day(String source, String weekStart) {
        try {
            return DayOfWeek.valueOf(weekStart.trim().toUpperCase(Locale.ROOT));
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidLimitException(source + "week-start", source + "week-start must be a day of the week "
                    + "(monday ... sunday), but was '" + weekStart + "'.");
        }
    }

    /**
     * The period's name in a store key: its first day in the zone ({@code 2026-03-15}), unique per period of this
     * calendar and readable by an operator looking at the keys.
     */
    public String periodName(CalendarPeriods.Span span) {
        return java.time.LocalDate.ofInstant(span.start(), zone).toString();
    }

    /** The period holding {@code at}. */
    public CalendarPeriods.Span spanAt(Instant at) {
        return CalendarPeriods.spanAt(at, unit, zone, anchorDay, weekStart);
    }

    @Override
    public long quota() {
        return limit;
    }

    /**
     * The period's nominal length (a day, 7 days, 30 days), which the {@code RateLimit-Policy} item states as its
     * window; the actual period ({@link #spanAt}) may be an hour or a few days off, and the reset says when it ends.
     */
    @Override
    public Duration window() {
        return switch (unit) {
            case DAY -> Duration.ofDays(1);
            case WEEK -> Duration.ofDays(7);
            case MONTH -> Duration.ofDays(30);
        };
    }

    /** The longest a period can be: a day of 25 hours, a week holding one, a month of 31 days holding one. */
    @Override
    public Duration stateLifetime() {
        return switch (unit) {
            case DAY -> Duration.ofHours(25);
            case WEEK -> Duration.ofDays(7).plusHours(1);
            case MONTH -> Duration.ofDays(31).plusHours(1);
        };
    }

    @Override
    public CalendarQuotaLimit scaled(double factor) {
        return withLimit(Math.max(1, (long) Math.ceil(limit * factor)));
    }

    /** A region's share of the period's quota, on the same calendar: the counters stay. */
    @Override
    public CalendarQuotaLimit share(long amount) {
        return withLimit(Math.max(1, amount));
    }

    private CalendarQuotaLimit withLimit(long other) {
        return new CalendarQuotaLimit(other, unit, zone, anchorDay, weekStart);
    }

    /**
     * The calendar, not the amount: a counter means requests of one period of one calendar; another zone, anchor day
     * or week start counts other periods. The period itself is part of each key the store writes.
     */
    @Override
    public String shape() {
        String calendar = switch (unit) {
            case DAY -> "d";
            case WEEK -> "w" + weekStart.getValue();
            case MONTH -> "m" + anchorDay;
        };
        // A zone id may hold '/' and '+' (Etc/GMT+5): kept out of key names, which other tools split on '/'.
        return "q" + calendar + "@" + zone.getId().replace('/', '.').replace("+", "p");
    }

    @Override
    public boolean capsInProgress() {
        return false;
    }

    /** A hard count per period must be decided by the store: an instance's share settled later could overspend it. */
    @Override
    public boolean settlesLocally() {
        return false;
    }

    /** A hard count per period: its shards hold whole parts that add up to it. */
    @Override
    public boolean shardsInWholeParts() {
        return true;
    }

    /**
     * A region's count for the period stays with the region until the boundary: with shares moved mid-period (the
     * rebalancer follows the traffic) the regions together admitted 180 of a monthly 100 in a test. Each region holds
     * the whole quota instead (scope regional), or a token bucket splits a global rate.
     */
    @Override
    public boolean splitsBetweenRegions() {
        return false;
    }

    @Override
    public <R> R match(Cases<R> cases) {
        return cases.calendarQuota(this);
    }
}
