package dev.ratelimiter.scenarios;

import java.util.List;

import dev.ratelimiter.scenarios.FallbackAllowance.Reading;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/** The arithmetic of what the fallback share may admit on top of a quota, and the meters it is measured from. */
class FallbackAllowanceTest {

    private static final Reading NONE = new Reading(0, 0);

    @Test
    void theShareIsTheLimitSplitOverTheInstancesNeverMoreThanTheLimit() {
        assertThat(FallbackAllowance.share(10, 1)).isEqualTo(10);
        assertThat(FallbackAllowance.share(10, 2)).isEqualTo(5);
        assertThat(FallbackAllowance.share(10, 4)).isEqualTo(2.5);
        assertThat(FallbackAllowance.share(10, 3)).isCloseTo(3.33, within(0.01));
    }

    @Test
    void noFallbackNoAllowance() {
        FallbackAllowance allowance = FallbackAllowance.of(10, List.of(NONE, NONE));
        assertThat(allowance.none()).isTrue();
        assertThat(allowance.requests()).isZero();
        assertThat(allowance.fellBack()).isZero();
    }

    @Test
    void eachInstanceThatFellBackMayAdmitABurstOfItsShareAndItsRefillOverItsFallbackAndTheBreakersOpenTime() {
        // two instances: each holds half the limit (10 ÷ 2); one decided alone for 1.1 s
        FallbackAllowance one = FallbackAllowance.of(10, List.of(new Reading(1.1, 37), NONE));
        assertThat(one.none()).isFalse();
        assertThat(one.requests()).isCloseTo(5 * (1 + 1.1 + 1), within(1e-9));
        assertThat(one.describe()).isEqualTo(
                "15.50 decided from the fallback share: store fell back 1.10 s on 1 of 2 gateways, 37 decisions");

        // four instances: a share of 2.5 each; both that fell back count, the seconds and decisions summed
        FallbackAllowance two = FallbackAllowance.of(10, List.of(new Reading(0.2, 5), NONE, new Reading(1.3, 40),
                NONE));
        assertThat(two.requests()).isCloseTo(2.5 * (1 + 0.2 + 1) + 2.5 * (1 + 1.3 + 1), within(1e-9));
        assertThat(two.seconds()).isCloseTo(1.5, within(1e-9));
        assertThat(two.decisions()).isEqualTo(45);
        assertThat(two.fellBack()).isEqualTo(2);
        assertThat(two.describe()).startsWith("13.75 decided from the fallback share: store fell back 1.50 s on 2 of 4");
    }

    @Test
    void aFallbackSeenOnlyAsDecisionsOrOnlyAsTimeStillCounts() {
        // a timed-out decision followed at once by a store answer: decisions, next to no time
        assertThat(FallbackAllowance.of(10, List.of(new Reading(0, 3), NONE)).requests()).isEqualTo(10);
        assertThat(FallbackAllowance.of(10, List.of(NONE, new Reading(0.5, 0))).requests()).isEqualTo(12.5);
    }

    @Test
    void thePhaseIsWhatEachInstanceAddedBetweenItsReadings() {
        List<Reading> before = List.of(new Reading(2.0, 100), new Reading(0.4, 7));
        List<Reading> after = List.of(new Reading(2.0, 100), new Reading(1.9, 50));
        FallbackAllowance phase = FallbackAllowance.over(10, before, after);
        assertThat(phase.fellBack()).isEqualTo(1);
        assertThat(phase.seconds()).isCloseTo(1.5, within(1e-9));
        assertThat(phase.decisions()).isEqualTo(43);
        assertThat(phase.requests()).isCloseTo(5 * (1 + 1.5 + 1), within(1e-9));
        assertThatIllegalArgumentException().isThrownBy(() -> FallbackAllowance.over(10, before, after.subList(0, 1)));
    }

    @Test
    void readsTheFallbackTimeAndTheDecisionsOfEveryFailureModeFromThePrometheusText() {
        String exposition = """
                # HELP ratelimit_fallback_decisions_total Rules decided without the store, by failure mode
                # TYPE ratelimit_fallback_decisions_total counter
                ratelimit_fallback_decisions_total{mode="closed"} 0.0
                ratelimit_fallback_decisions_total{mode="local"} 44.0
                ratelimit_fallback_decisions_total{mode="open"} 2.0
                # HELP ratelimit_fallback_time_seconds_total Seconds spent deciding without the store
                # TYPE ratelimit_fallback_time_seconds_total counter
                ratelimit_fallback_time_seconds_total 1.714284186
                ratelimit_fallback_time_seconds_total_other 99.0
                ratelimit_store_calls_seconds_count{outcome="timeout"} 12.0
                """;
        Reading reading = Reading.parse(exposition);
        assertThat(reading.seconds()).isCloseTo(1.714284186, within(1e-12));
        assertThat(reading.decisions()).isEqualTo(46);
        assertThat(Reading.parse("ratelimit_fallback_time_seconds_total 0.0\n").fellBack()).isFalse();
    }

    @Test
    void aGatewayWithoutTheFallbackMetersIsRefusedNotTakenForOneThatNeverFellBack() {
        assertThatIllegalArgumentException().isThrownBy(() -> Reading.parse("jvm_threads_live_threads 42.0\n"))
                .withMessageContaining("ratelimit_fallback_time_seconds_total");
    }
}
