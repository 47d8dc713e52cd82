package dev.ratelimiter.core;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A calendar quota's settings refused with a message naming the setting, what it takes and what it was; its counts
 * in the in-memory model (the fallback's and the in-memory store's arithmetic); and the rule settings it cannot take.
 */
class CalendarQuotaLimitTest {

    private static final String SOURCE = "ratelimit.rules.monthly.";

    @Test
    void defaultsAreUtcTheFirstAndMonday() {
        CalendarQuotaLimit quota = CalendarQuotaLimit.of(SOURCE, 1000, "Month", null, null, null);
        assertThat(quota).isEqualTo(new CalendarQuotaLimit(1000, CalendarPeriods.Unit.MONTH, ZoneId.of("UTC"), 1,
                DayOfWeek.MONDAY));
        assertThat(CalendarQuotaLimit.of(SOURCE, 5, "week", "Europe/Berlin", null, "sunday").weekStart())
                .isEqualTo(DayOfWeek.SUNDAY);
    }

    @Test
    void badSettingsAreRefusedByName() {
        assertRefused(() -> CalendarQuotaLimit.of(SOURCE, 10, "year", null, null, null), SOURCE + "period",
                "period must be day, week or month", "'year'");
        assertRefused(() -> CalendarQuotaLimit.of(SOURCE, 10, null, null, null, null), SOURCE + "period",
                "period must be day, week or month", "missing");
        assertRefused(() -> CalendarQuotaLimit.of(SOURCE, 10, "day", "Mars/Olympus", null, null), SOURCE + "zone",
                "zone must be a time zone id", "'Mars/Olympus'");
        assertRefused(() -> CalendarQuotaLimit.of(SOURCE, 10, "month", null, 0, null), SOURCE + "anchor-day",
                "from 1 to 31", "but was 0");
        assertRefused(() -> CalendarQuotaLimit.of(SOURCE, 10, "month", null, 32, null), SOURCE + "anchor-day",
                "from 1 to 31", "but was 32");
        assertRefused(() -> CalendarQuotaLimit.of(SOURCE, 10, "day", null, 15, null), SOURCE + "anchor-day",
                "applies to period month only", "period is day");
        assertRefused(() -> CalendarQuotaLimit.of(SOURCE, 10, "month", null, null, "monday"),
                SOURCE + "week-start", "applies to period week only", "period is month");
        assertRefused(() -> CalendarQuotaLimit.of(SOURCE, 10, "week", null, null, "someday"),
                SOURCE + "week-start", "day of the week", "'someday'");
        assertRefused(() -> CalendarQuotaLimit.of(SOURCE, 0, "day", null, null, null), SOURCE + "limit",
                "at least 1", "but was 0");
    }

    private static void assertRefused(Runnable make, String setting, String... message) {
        assertThatThrownBy(make::run).isInstanceOfSatisfying(InvalidLimitException.class, ex -> {
            assertThat(ex.setting()).isEqualTo(setting);
            assertThat(ex.getMessage()).startsWith(setting).contains(message);
        });
    }

    @Test
    void storeModeLocalAndGlobalScopeAreRefusedAndShardsAreNot() {
        CalendarQuotaLimit quota = CalendarQuotaLimit.of(SOURCE, 1000, "day", null, null, null);
        assertThatThrownBy(() -> new Rule("daily", "daily", Match.ANY, List.of(Dimension.API_KEY), quota, 0,
                Mode.ENFORCE, FailureMode.LOCAL, StoreMode.LOCAL, 1, null, Scope.REGIONAL))
                .isInstanceOfSatisfying(InvalidLimitException.class, ex -> {
                    assertThat(ex.setting()).isEqualTo("store-mode");
                    assertThat(ex.getMessage()).contains("store-mode exact");
                });
        Rule sharded = new Rule("daily", "daily", Match.ANY, List.of(Dimension.API_KEY), quota, 0, Mode.ENFORCE,
                FailureMode.LOCAL, StoreMode.EXACT, 4, null, Scope.REGIONAL);
        assertThat(sharded.limit().scaled(1.0 / 4).quota()).isEqualTo(250);
        // A global quota is refused: a region keeps its count until the boundary, so shares moved mid-period let the
        // regions together admit more than the quota (CalendarQuotaAccuracyAttackTest: 180 of 100).
        assertThatThrownBy(() -> new Rule("daily", "daily", Match.ANY, List.of(Dimension.API_KEY), quota, 0,
                Mode.ENFORCE, FailureMode.LOCAL, StoreMode.EXACT, 1, null, Scope.GLOBAL))
                .isInstanceOfSatisfying(InvalidLimitException.class, ex -> {
                    assertThat(ex.setting()).isEqualTo("scope");
                    assertThat(ex.getMessage()).contains("rule 'daily' counts per calendar period")
                            .contains("Use scope regional");
                });
        assertThat(quota.share(300)).isEqualTo(new CalendarQuotaLimit(300, CalendarPeriods.Unit.DAY,
                ZoneId.of("UTC"), 1, DayOfWeek.MONDAY));
    }

    @Test
    void theShapeNamesTheCalendarAndKeepsZoneIdsOutOfKeySyntax() {
        Set<String> shapes = Set.of(CalendarQuotaLimit.of(SOURCE, 1, "day", "Etc/GMT+5", null, null).shape(),
                CalendarQuotaLimit.of(SOURCE, 1, "day", "Etc/GMT-5", null, null).shape(),
                CalendarQuotaLimit.of(SOURCE, 1, "month", "Europe/Berlin", 15, null).shape(),
                CalendarQuotaLimit.of(SOURCE, 1, "month", "Europe/Berlin", 16, null).shape(),
                CalendarQuotaLimit.of(SOURCE, 1, "week", "Europe/Berlin", null, "sunday").shape());
        assertThat(shapes).hasSize(5).allSatisfy(shape -> assertThat(shape).doesNotContain("/", "+", ":"));
        // the amount is not part of it: a region's share counts on the same counters
        CalendarQuotaLimit quota = CalendarQuotaLimit.of(SOURCE, 1000, "month", "Europe/Berlin", 15, null);
        assertThat(quota.share(10).shape()).isEqualTo(quota.shape());
    }

    @Test
    void theModelCountsPerPeriodAndRetriesAtTheBoundary() {
        CalendarQuotaLimit quota = CalendarQuotaLimit.of(SOURCE, 3, "day", "Europe/Berlin", null, null);
        // 2026-03-29, the 23-hour day in Berlin: it ends at 22:00 UTC
        long start = nanos(Instant.parse("2026-03-28T23:00:00Z"));
        long end = nanos(Instant.parse("2026-03-29T22:00:00Z"));
        AlgorithmModel model = AlgorithmModel.of(quota, start);
        long now = start + Duration.ofHours(20).toNanos();
        for (int i = 0; i < 3; i++) {
            AlgorithmModel.Step step = model.preview(1, now);
            assertThat(step.allowed()).isTrue();
            assertThat(step.remaining()).isEqualTo(2 - i);
            assertThat(step.preview().resetAfter()).isEqualTo(Duration.ofNanos(end - now));
            model.commit(step);
        }
        AlgorithmModel.Step refused = model.preview(1, now);
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.preview().retryAfter()).isEqualTo(Duration.ofHours(3));
        assertThat(model.preview(1, end - 1).allowed()).isFalse();
        AlgorithmModel.Step next = model.preview(3, end);
        assertThat(next.allowed()).as("the whole quota back at midnight Berlin").isTrue();
        assertThat(next.stamp()).isEqualTo(end);
        assertThat(next.preview().resetAfter()).isEqualTo(Duration.ofHours(24));
    }

    private static long nanos(Instant instant) {
        return instant.getEpochSecond() * 1_000_000_000L + instant.getNano();
    }
}
