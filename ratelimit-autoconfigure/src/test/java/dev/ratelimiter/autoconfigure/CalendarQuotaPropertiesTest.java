package dev.ratelimiter.autoconfigure;

import java.time.DayOfWeek;
import java.time.ZoneId;

import dev.ratelimiter.core.CalendarPeriods;
import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.RuleSetHolder;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A calendar quota from application properties: bound as written, and each bad setting stops the start-up with a
 * message that names it, says what it takes and what it was.
 */
class CalendarQuotaPropertiesTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
            .withPropertyValues("ratelimit.rules.monthly.algorithm=calendar-quota", "ratelimit.rules.monthly.limit=1000",
                    "ratelimit.rules.monthly.key[0]=api-key");

    @Test
    void aBillingMonthIsBoundAsWritten() {
        runner.withPropertyValues("ratelimit.rules.monthly.period=month", "ratelimit.rules.monthly.zone=Europe/Berlin",
                "ratelimit.rules.monthly.anchor-day=15").run(context -> assertThat(context.getBean(RuleSetHolder.class)
                        .get().rules().get("monthly").limit()).isEqualTo(new CalendarQuotaLimit(1000,
                                CalendarPeriods.Unit.MONTH, ZoneId.of("Europe/Berlin"), 15, DayOfWeek.MONDAY)));
        runner.withPropertyValues("ratelimit.rules.monthly.period=week", "ratelimit.rules.monthly.week-start=sunday")
                .run(context -> assertThat(context.getBean(RuleSetHolder.class).get().rules().get("monthly").limit())
                        .isEqualTo(new CalendarQuotaLimit(1000, CalendarPeriods.Unit.WEEK, ZoneId.of("UTC"), 1,
                                DayOfWeek.SUNDAY)));
    }

    @Test
    void badSettingsStopTheStartUpNamingThem() {
        refused("ratelimit.rules.monthly.period must be day, week or month", "ratelimit.rules.monthly.period=year");
        refused("ratelimit.rules.monthly.zone must be a time zone id", "ratelimit.rules.monthly.period=day",
                "ratelimit.rules.monthly.zone=Berlin");
        refused("ratelimit.rules.monthly.anchor-day must be a day of the month from 1 to 31",
                "ratelimit.rules.monthly.period=month", "ratelimit.rules.monthly.anchor-day=0");
        refused("ratelimit.rules.monthly.anchor-day must be a day of the month from 1 to 31",
                "ratelimit.rules.monthly.period=month", "ratelimit.rules.monthly.anchor-day=32");
        refused("ratelimit.rules.monthly.anchor-day applies to period month only",
                "ratelimit.rules.monthly.period=day", "ratelimit.rules.monthly.anchor-day=15");
        refused("ratelimit.rules.monthly has store-mode local", "ratelimit.rules.monthly.period=day",
                "ratelimit.rules.monthly.store-mode=local");
    }

    private void refused(String message, String... properties) {
        runner.withPropertyValues(properties).run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                .hasMessageStartingWith(message));
    }
}
