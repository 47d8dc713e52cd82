package dev.ratelimiter.test;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.TokenBucketLimit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The kit's buckets: the limiter's in-memory arithmetic on a clock that only the test moves. */
class TestBucketsTest {

    /** A burst of 3, refilled at 1 a second. */
    private final Rule rule = new Rule("free.default", "free.default", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("free.default.", 3, 1, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
    private final Check check = new Check(rule, new BucketKey(ClientIds.unkeyed().of("key"), rule.id()), 1, false);
    private final TestBuckets buckets = new TestBuckets();

    @Test
    void withTheClockStillExactlyTheBurstIsAdmittedThenRefused() {
        for (int i = 0; i < 3; i++) {
            assertThat(one().allowed()).as("request %d", i + 1).isTrue();
        }
        RuleOutcome refused = one();
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfter()).isEqualTo(Duration.ofSeconds(1));
        assertThat(one().allowed()).as("nothing refills while the test does not move the clock").isFalse();
    }

    @Test
    void advancingTheClockRefillsAsThatMuchTimeWould() {
        drain();
        buckets.advance(Duration.ofMillis(999));
        assertThat(one().allowed()).isFalse();
        buckets.advance(Duration.ofMillis(1));
        assertThat(one().allowed()).isTrue();
        assertThat(one().allowed()).isFalse();
    }

    @Test
    void resetFillsEveryBucketAgain() {
        drain();
        buckets.reset();
        assertThat(one().allowed()).isTrue();
        assertThat(one().remaining()).isEqualTo(1);
    }

    @Test
    void timeOnlyMovesForward() {
        assertThatIllegalArgumentException().isThrownBy(() -> buckets.advance(Duration.ofSeconds(-1)))
                .withMessageContaining("time only moves forward");
    }

    @Test
    void theLimitersOwnInMemoryStoreIsFoundInside() {
        assertThat(buckets.find(TestBuckets.class)).containsSame(buckets);
        assertThat(buckets.find(LocalBucketStore.class)).isPresent();
    }

    private void drain() {
        while (one().allowed()) {
            // spends the burst
        }
    }

    private RuleOutcome one() {
        return buckets.evaluate(List.of(check)).block(Duration.ofSeconds(5)).outcomes().get(0);
    }
}
