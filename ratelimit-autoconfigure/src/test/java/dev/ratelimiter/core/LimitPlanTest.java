package dev.ratelimiter.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LimitPlanTest {

    private final TokenBucketLimit freeDefault = limit("free", "default", 10);
    private final TokenBucketLimit freeReports = limit("free", "reports", 2);
    private final TokenBucketLimit proDefault = limit("pro", "default", 100);

    private final LimitPlan plan = LimitPlan.builder("free")
            .limit("free", "default", freeDefault)
            .limit("free", "reports", freeReports)
            .limit("pro", "default", proDefault)
            .apiKey("acme", "pro")
            .build();

    @Test
    void listedKeysHaveTheirTierAndUnknownKeysTheDefault() {
        assertThat(plan.tierOf("acme")).isEqualTo("pro");
        assertThat(plan.tierOf("stranger")).isEqualTo("free");
    }

    @Test
    void routeClassWithoutItsOwnLimitFallsBackToTheTierDefault() {
        assertThat(plan.limitFor("free", "reports")).contains(freeReports);
        assertThat(plan.limitFor("free", "search")).contains(freeDefault);
        assertThat(plan.limitFor("pro", "reports")).contains(proDefault);
    }

    @Test
    void tierWithoutAnyMatchingLimitIsUnlimited() {
        LimitPlan partial = LimitPlan.builder("free").limit("free", "reports", freeReports).build();
        assertThat(partial.limitFor("free", "search")).isEmpty();
    }

    @Test
    void defaultTierMustExist() {
        assertThatThrownBy(() -> LimitPlan.builder("gold").limit("free", "default", freeDefault).build())
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("ratelimit.default-tier is 'gold'")
                .hasMessageContaining("[free]");
    }

    @Test
    void aKeyBelongsToOneTier() {
        assertThatThrownBy(() -> LimitPlan.builder("free").apiKey("acme", "free").apiKey("acme", "pro"))
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("ratelimit.tiers.free.api-keys and ratelimit.tiers.pro.api-keys");
    }

    @Test
    void unsafeNamesAreRefused() {
        assertThatThrownBy(() -> LimitPlan.builder("free").tier("fr{ee}"))
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("'fr{ee}'")
                .hasMessageContaining("letters, digits");
    }

    @Test
    void badLimitValuesNameTheSettingAndTheValue() {
        assertThatThrownBy(() -> TokenBucketLimit.builder("free.default").source("ratelimit.tiers.free.limits.default")
                .capacity(0).refill(5, Duration.ofSeconds(1)).build())
                .isInstanceOf(InvalidLimitException.class)
                .hasMessage("ratelimit.tiers.free.limits.default.capacity must be at least 1 (the largest burst a "
                        + "client may send), but was 0.");
        assertThatThrownBy(() -> TokenBucketLimit.builder("free.default").capacity(10).refill(-5, Duration.ofSeconds(1))
                .build())
                .hasMessageContaining("refill-tokens must be at least 1").hasMessageContaining("-5");
        assertThatThrownBy(() -> TokenBucketLimit.builder("free.default").capacity(10).refill(5, Duration.ZERO).build())
                .hasMessageContaining("refill-period must be a duration of at least 1ms");
    }

    private static TokenBucketLimit limit(String tier, String routeClass, long capacity) {
        return TokenBucketLimit.builder(LimitPlan.policyName(tier, routeClass))
                .capacity(capacity)
                .refill(capacity, Duration.ofSeconds(1))
                .build();
    }
}
