package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static dev.ratelimiter.core.Fixtures.check;
import static dev.ratelimiter.core.Fixtures.slidingWindow;
import static dev.ratelimiter.core.Fixtures.tokenBucket;
import static org.assertj.core.api.Assertions.assertThat;

class LocalBucketStoreTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000_000L);
    private final LocalBucketStore store = new LocalBucketStore(1_000, clock::get);
    private final Rule bucket = tokenBucket("free.default", 10, 5, Duration.ofSeconds(1));

    @Test
    void fullBucketAdmitsItsBurstThenRefuses() {
        for (int i = 0; i < 10; i++) {
            RuleOutcome outcome = one(bucket);
            assertThat(outcome.allowed()).isTrue();
            assertThat(outcome.remaining()).isEqualTo(9 - i);
        }
        RuleOutcome denied = one(bucket);
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.remaining()).isZero();
        assertThat(denied.retryAfter()).isEqualTo(Duration.ofMillis(200));
        assertThat(denied.resetAfter()).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void refillsContinuouslyNotInWholeSeconds() {
        drain(bucket, 10);
        advance(Duration.ofMillis(199));
        assertThat(one(bucket).allowed()).isFalse();
        advance(Duration.ofMillis(1));
        assertThat(one(bucket).allowed()).isTrue();
        advance(Duration.ofMillis(600));
        assertThat(one(bucket).remaining()).isEqualTo(2);
    }

    @Test
    void costTakesSeveralTokensAndRetryAfterCoversTheShortfall() {
        Check three = new Check(bucket, check(bucket, "k").bucket(), 3, false);
        RuleOutcome first = store.evaluateNow(List.of(three)).outcomes().get(0);
        assertThat(first.remaining()).isEqualTo(7);
        assertThat(first.resetAfter()).isEqualTo(Duration.ofMillis(600));
        store.evaluateNow(List.of(new Check(bucket, three.bucket(), 6, false)));
        RuleOutcome denied = store.evaluateNow(List.of(three)).outcomes().get(0);
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.remaining()).isEqualTo(1);
        assertThat(denied.retryAfter()).isEqualTo(Duration.ofMillis(400));
    }

    @Test
    void oneDenyingRuleMeansNoRuleSpends() {
        Rule roomy = tokenBucket("roomy", 100, 1, Duration.ofHours(1));
        Rule tight = tokenBucket("tight", 2, 1, Duration.ofHours(1));
        List<Check> both = List.of(check(roomy, "k"), check(tight, "k"));
        assertThat(store.evaluateNow(both).allowed()).isTrue();
        assertThat(store.evaluateNow(both).allowed()).isTrue();
        Verdict denied = store.evaluateNow(both);
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.outcomes().get(0).allowed()).as("roomy alone would allow").isTrue();
        assertThat(denied.outcomes().get(0).remaining()).isEqualTo(98);
        assertThat(one(roomy).remaining()).as("roomy spent only for the two allowed requests").isEqualTo(97);
    }

    @Test
    void shadowRulesNeverDenyButReportTheirWouldBeDenial() {
        Rule shadow = Fixtures.rule("shadowed", TokenBucketLimit.of("s.", 1, 1, Duration.ofHours(1)), Mode.SHADOW);
        assertThat(store.evaluateNow(List.of(check(shadow, "k"))).allowed()).isTrue();
        Verdict second = store.evaluateNow(List.of(check(shadow, "k")));
        assertThat(second.allowed()).isTrue();
        assertThat(second.shadowDenials()).hasSize(1);
    }

    @Test
    void slidingWindowWeightsThePreviousWindow() {
        Rule window = slidingWindow("hourly", 100, Duration.ofSeconds(10));
        clock.set(Duration.ofSeconds(10_000).toNanos() + Duration.ofMillis(9_500).toNanos());
        drain(window, 100);
        assertThat(one(window).allowed()).isFalse();
        advance(Duration.ofMillis(1_500));
        // 10% into the next window: the previous 100 weigh 90, so 10 more fit.
        int allowed = 0;
        for (int i = 0; i < 50; i++) {
            allowed += one(window).allowed() ? 1 : 0;
        }
        assertThat(allowed).isBetween(9, 10);
    }

    @Test
    void idleBucketsAreForgottenOnceTheyWouldBeFull() {
        drain(bucket, 10);
        assertThat(store.size()).isEqualTo(1);
        advance(Duration.ofMillis(2_001));
        assertThat(store.size()).isZero();
        assertThat(one(bucket).remaining()).isEqualTo(9);
    }

    @Test
    void holdsNoMoreThanMaxKeys() {
        LocalBucketStore small = new LocalBucketStore(100, clock::get);
        for (int i = 0; i < 1_000; i++) {
            small.evaluateNow(List.of(check(bucket, "client-" + i)));
        }
        assertThat(small.size()).isLessThanOrEqualTo(100);
    }

    private RuleOutcome one(Rule rule) {
        return store.evaluateNow(List.of(check(rule, "k"))).outcomes().get(0);
    }

    private void drain(Rule rule, int times) {
        for (int i = 0; i < times; i++) {
            one(rule);
        }
    }

    private void advance(Duration duration) {
        clock.addAndGet(duration.toNanos());
    }
}
