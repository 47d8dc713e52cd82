package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static dev.ratelimiter.core.Fixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

/** Concurrency permits held in this JVM: the memory store, and the fallback while the shared store is away. */
class LocalPermitsTest {

    private final AtomicLong clock = new AtomicLong();
    private final LocalBucketStore store = new LocalBucketStore(1_000, clock::get);
    private final Rule reports = rule("reports", ConcurrencyLimit.of("reports.", 3, Duration.ofSeconds(30)),
            Mode.ENFORCE);

    @Test
    void capsInProgressAndFreesExactlyTheGivenBackPermit() {
        List<Check> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Check check = permit(reports, "client");
            assertThat(store.evaluateNow(List.of(check)).permitsHeld()).containsExactly(check);
            held.add(check);
        }
        Verdict refused = store.evaluateNow(List.of(permit(reports, "client")));
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.outcomes().get(0).retryAfter()).isEqualTo(ConcurrencyLimit.RETRY_HINT);

        held.get(1).permits().end();
        held.get(1).permits().end();
        permit(reports, "client").permits().end();
        assertThat(store.inProgress(held.get(0).bucket())).as("one held permit given back, twice; one never held")
                .isEqualTo(2);
        assertThat(store.evaluateNow(List.of(permit(reports, "client"))).allowed()).isTrue();
    }

    @Test
    void aBucketHoldingPermitsIsNotForgottenWhileIdle() {
        Check check = permit(reports, "client");
        store.evaluateNow(List.of(check));
        clock.addAndGet(Duration.ofMinutes(10).toNanos());
        assertThat(store.inProgress(check.bucket())).isEqualTo(1);
        check.permits().end();
        assertThat(store.inProgress(check.bucket())).isZero();
    }

    @Test
    void aFloodOfNewKeysNeverEvictsAHeldPermit() {
        LocalBucketStore small = new LocalBucketStore(10, clock::get);
        Rule oneAtATime = rule("one", ConcurrencyLimit.of("one.", 1, Duration.ofSeconds(30)), Mode.ENFORCE);
        Check held = permit(oneAtATime, "client");
        assertThat(small.evaluateNow(List.of(held)).allowed()).isTrue();
        Rule burst = Fixtures.tokenBucket("burst", 5, 1, Duration.ofHours(1));
        for (int key = 0; key < 1_000; key++) {
            for (int hit = 0; hit < 5; hit++) {
                small.evaluateNow(List.of(Fixtures.check(burst, "flood-" + key)));
            }
        }
        small.size(); // the cache's pending evictions, run now
        assertThat(small.inProgress(held.bucket())).isEqualTo(1);
        assertThat(small.evaluateNow(List.of(permit(oneAtATime, "client"))).allowed())
                .as("the request in progress still counts").isFalse();
        assertThat(small.size()).as("the flood is bounded: 10 buckets and the one holding a permit").isEqualTo(11);
        held.permits().end();
        assertThat(small.evaluateNow(List.of(permit(oneAtATime, "client"))).allowed()).isTrue();
    }

    @Test
    void beyondItsCapOfPermitBucketsANewBucketIsRefusedAndNothingHeldIsForgotten() {
        LocalBucketStore two = new LocalBucketStore(2, clock::get);
        Check first = permit(reports, "first");
        Check second = permit(reports, "second");
        assertThat(two.evaluateNow(List.of(first)).allowed()).isTrue();
        assertThat(two.evaluateNow(List.of(second)).allowed()).isTrue();
        Verdict third = two.evaluateNow(List.of(permit(reports, "third")));
        assertThat(third.allowed()).isFalse();
        assertThat(third.outcomes().get(0).retryAfter()).isEqualTo(ConcurrencyLimit.RETRY_HINT);
        assertThat(two.evaluateNow(List.of(permit(reports, "first"))).allowed()).as("a bucket it holds still takes "
                + "permits up to its limit").isTrue();
        assertThat(two.inProgress(first.bucket())).isEqualTo(2);
        second.permits().end();
        assertThat(two.inProgress(second.bucket())).isZero();
        assertThat(two.evaluateNow(List.of(permit(reports, "third"))).allowed()).as("room again").isTrue();
    }

    @Test
    void aPermitIsNotTakenWhenAnotherRuleRefusesTheRequest() {
        Rule bucket = Fixtures.tokenBucket("burst", 1, 1, Duration.ofHours(1));
        Check first = permit(reports, "client");
        assertThat(store.evaluateNow(List.of(Fixtures.check(bucket, "client"), first)).allowed()).isTrue();
        Verdict refused = store.evaluateNow(List.of(Fixtures.check(bucket, "client"), permit(reports, "client")));
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.permitsHeld()).isEmpty();
        assertThat(store.inProgress(first.bucket())).isEqualTo(1);
    }

    @Test
    void withoutTheStoreEachInstanceHoldsItsShareOfPermitsTimesTheShareFactor() {
        Rule fleetCap = rule("fleet", ConcurrencyLimit.of("fleet.", 10, Duration.ofSeconds(30)), Mode.ENFORCE);
        WithoutStore withoutStore = new WithoutStore(store, () -> 4, StoreMetrics.NONE, () -> Duration.ofSeconds(1),
                2.0);
        List<Check> held = new ArrayList<>();
        int allowed = 0;
        for (int i = 0; i < 10; i++) {
            Check check = permit(fleetCap, "client");
            if (withoutStore.decide(List.of(check)).allowed()) {
                allowed++;
                held.add(check);
            }
        }
        assertThat(allowed).as("10 / 4 instances x 2").isEqualTo(5);
        held.forEach(check -> check.permits().end());
        assertThat(withoutStore.decide(List.of(permit(fleetCap, "client"))).allowed()).isTrue();
    }

    @Test
    void aConcurrencyRuleRefusesSettingsThatCannotApply() {
        ConcurrencyLimit limit = ConcurrencyLimit.of("r.", 2, Duration.ofSeconds(5));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Rule("r", "r", Match.ANY,
                List.of(Dimension.API_KEY), limit, 0, Mode.ENFORCE, FailureMode.LOCAL, StoreMode.LOCAL, 1))
                .isInstanceOf(InvalidLimitException.class).hasMessageContaining("store-mode exact");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConcurrencyLimit.of("r.", 0, Duration.ofSeconds(5)))
                .hasMessageContaining("r.max-in-progress must be at least 1");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConcurrencyLimit.of("r.", 2, Duration.ofMillis(10)))
                .hasMessageContaining("r.lease must be a duration of at least 1s");
    }

    private Check permit(Rule rule, String client) {
        return new Check(rule, new BucketKey(ClientIds.unkeyed().of(client), rule.id()), 1, false, new RequestPermits());
    }
}
