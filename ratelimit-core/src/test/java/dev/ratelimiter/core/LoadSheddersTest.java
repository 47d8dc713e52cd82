package dev.ratelimiter.core;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Shedders built from plain settings: each upstream with its algorithm and tuning, bad settings refused by name. */
class LoadSheddersTest {

    private static final String SOURCE = "ratelimit.shedding";

    @Test
    void eachUpstreamGetsOneShedderForAllItsRoutesAndTheDefaultPriorityIsParsed() {
        Map<String, LoadShedderSettings.Upstream> upstreams = new LinkedHashMap<>();
        upstreams.put("reports", new LoadShedderSettings.Upstream(List.of(), 40, false));
        upstreams.put("search", new LoadShedderSettings.Upstream(List.of("search-a", "search-b"), 10, true));

        LoadShedders shedders = LoadShedders.of(new LoadShedderSettings(SOURCE, 0.85, "background", upstreams));

        assertThat(shedders.all()).extracting(LoadShedder::upstream).containsExactly("reports", "search");
        assertThat(shedders.byRoute()).containsOnlyKeys("reports", "search-a", "search-b");
        assertThat(shedders.byRoute().get("search-a")).isSameAs(shedders.byRoute().get("search-b"));
        assertThat(shedders.byRoute().get("reports").limit()).isEqualTo(40);
        assertThat(shedders.byRoute().get("search-a").limit()).as("adaptive: starts at half the ceiling").isEqualTo(5);
        assertThat(shedders.defaultPriority()).isEqualTo(Priority.BACKGROUND);
    }

    @Test
    void aFixedUpstreamHoldsMaxInFlightWhateverTheLatency() {
        Limit limit = LoadShedders.limitOf(new LoadShedderSettings.Upstream(List.of(), 7, false));

        assertThat(limit).isInstanceOf(FixedLimit.class);
        for (int i = 0; i < 100; i++) {
            limit.onSample(i, 1_000_000_000L, 7, true);
        }
        assertThat(limit.getLimit()).isEqualTo(7);
    }

    @Test
    void anAdaptiveUpstreamLearnsUpToMaxInFlightAndNoFurther() {
        Limit limit = LoadShedders.limitOf(new LoadShedderSettings.Upstream(List.of(), 10, true));

        assertThat(limit).isInstanceOf(Gradient2Limit.class);
        assertThat(limit.getLimit()).as("initial: half the ceiling").isEqualTo(5);
        for (int i = 0; i < 200; i++) {
            // Steady latency with the limit in use: Gradient2 grows the limit, clamped at its max concurrency.
            limit.onSample(i, 1_000_000L, limit.getLimit(), false);
        }
        assertThat(limit.getLimit()).isEqualTo(10);
    }

    @Test
    void anAdaptiveUpstreamIsLiftedToItsFloorAtTheFirstSample() {
        // max-in-flight 3: initial max(1, 3 / 2) = 1, floor min(3, 4) = 3. Unclamped, Gradient2 would learn
        // 0.8 * 1 + 0.2 * (1 + 4) = 1.8 from one steady sample, still a limit of 1.
        Limit limit = LoadShedders.limitOf(new LoadShedderSettings.Upstream(List.of(), 3, true));

        assertThat(limit.getLimit()).isEqualTo(1);
        limit.onSample(0, 1_000_000L, 1, false);
        assertThat(limit.getLimit()).isEqualTo(3);
    }

    @Test
    void aTargetUtilisationOutsideZeroToOneIsRefusedByName() {
        for (double target : new double[] { 0, 1, 1.5, -0.1, Double.NaN }) {
            assertThatThrownBy(() -> LoadShedders.of(new LoadShedderSettings(SOURCE, target, "normal", Map.of())))
                    .isInstanceOfSatisfying(InvalidLimitException.class, ex -> assertThat(ex.setting())
                            .isEqualTo("ratelimit.shedding.target-utilisation"))
                    .hasMessage("ratelimit.shedding.target-utilisation must be between 0 and 1 (for example 0.85), "
                            + "but was " + target + ".");
        }
    }

    @Test
    void anUnknownDefaultPriorityIsRefusedByName() {
        assertThatThrownBy(() -> LoadShedders.of(new LoadShedderSettings(SOURCE, 0.85, "urgent", Map.of())))
                .isInstanceOfSatisfying(InvalidLimitException.class, ex -> assertThat(ex.setting())
                        .isEqualTo("ratelimit.shedding.default-priority"))
                .hasMessage("ratelimit.shedding.default-priority must be critical, normal or background, but was "
                        + "'urgent'.");
    }

    @Test
    void anUpstreamWithoutRoomIsRefusedByName() {
        Map<String, LoadShedderSettings.Upstream> upstreams = Map.of("reports",
                new LoadShedderSettings.Upstream(List.of(), 0, false));

        assertThatThrownBy(() -> LoadShedders.of(new LoadShedderSettings(SOURCE, 0.85, "normal", upstreams)))
                .isInstanceOfSatisfying(InvalidLimitException.class, ex -> assertThat(ex.setting())
                        .isEqualTo("ratelimit.shedding.upstreams.reports.max-in-flight"))
                .hasMessage("ratelimit.shedding.upstreams.reports.max-in-flight must be at least 1 (requests this "
                        + "instance may have in progress there), but was 0.");
    }

    @Test
    void aRouteClaimedByTwoUpstreamsIsBlamedOnTheLaterOne() {
        Map<String, LoadShedderSettings.Upstream> upstreams = new LinkedHashMap<>();
        upstreams.put("a", new LoadShedderSettings.Upstream(List.of("shared"), 5, false));
        upstreams.put("b", new LoadShedderSettings.Upstream(List.of("shared"), 5, false));

        assertThatThrownBy(() -> LoadShedders.of(new LoadShedderSettings(SOURCE, 0.85, "normal", upstreams)))
                .isInstanceOfSatisfying(InvalidLimitException.class, ex -> assertThat(ex.setting())
                        .isEqualTo("ratelimit.shedding.upstreams.b.route-ids"))
                .hasMessage("ratelimit.shedding.upstreams.b.route-ids names route 'shared', which upstream 'a' "
                        + "already protects.");
    }

    @Test
    void theSettingsKeepTheUpstreamsInTheirConfiguredOrder() {
        Map<String, LoadShedderSettings.Upstream> upstreams = new LinkedHashMap<>();
        for (String name : List.of("zeta", "alpha", "mid")) {
            upstreams.put(name, new LoadShedderSettings.Upstream(null, 1, false));
        }

        LoadShedderSettings settings = new LoadShedderSettings(SOURCE, 0.85, "normal", upstreams);
        upstreams.clear();

        assertThat(settings.upstreams()).containsOnlyKeys("zeta", "alpha", "mid");
        assertThat(List.copyOf(settings.upstreams().keySet())).containsExactly("zeta", "alpha", "mid");
        assertThat(settings.upstreams().get("zeta").routeIds()).isEmpty();
    }
}
