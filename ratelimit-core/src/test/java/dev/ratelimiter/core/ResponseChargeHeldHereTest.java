package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A response's reported amount the store could not take ({@link FailSafeStore#orHeldHere}, {@link WithoutStore#debit}):
 * spent from this instance's own bucket, which the fallback decides by, down to one capacity of debt, and owed to the
 * store with what the bucket spent on its own.
 */
class ResponseChargeHeldHereTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final LocalBucketStore buckets = new LocalBucketStore(100, clock::get);
    private final WithoutStore withoutStore = new WithoutStore(buckets, () -> 1, StoreMetrics.NONE,
            () -> Duration.ofSeconds(1));

    private static Rule rule(Limit limit) {
        return new Rule("llm", "llm", Match.ANY, List.of(Dimension.API_KEY), limit, 0, Mode.ENFORCE,
                FailureMode.LOCAL);
    }

    private static Check check(Rule rule, int cost) {
        return new Check(rule, new BucketKey("client", rule.id() + "@" + rule.limit().shape()), cost, false);
    }

    @Test
    void aTokenBucketIsHeldToWhatTheResponsesReportedDownToOneCapacityOfDebt() {
        Rule rule = rule(new TokenBucketLimit(1000, 1000, Duration.ofHours(1)));
        Check minimum = check(rule, 10);
        assertThat(withoutStore.decide(List.of(minimum)).allowed()).isTrue();
        withoutStore.debit(List.of(new FallbackCharges.Charge(minimum, 690, 0)));
        Verdict second = withoutStore.decide(List.of(minimum));
        assertThat(second.allowed()).as("300 left, 10 asked").isTrue();
        assertThat(second.outcomes().get(0).remaining()).isEqualTo(290);
        withoutStore.debit(List.of(new FallbackCharges.Charge(minimum, 5_000, 0)));
        Verdict third = withoutStore.decide(List.of(minimum));
        assertThat(third.allowed()).as("in debt: refused").isFalse();
        assertThat(third.outcomes().get(0).remaining()).as("never shown below zero").isZero();
        // one capacity of debt at most: 1,000 + 10 tokens to refill at 1,000 an hour
        assertThat(third.outcomes().get(0).retryAfter()).isEqualTo(Duration.ofSeconds(3636));
        double owed = withoutStore.drainOwed().stream().mapToDouble(FallbackCharges.Charge::total).sum();
        assertThat(owed).as("owed to the store: the two minimums and what was held, to the debt's bound")
                .isEqualTo(2000.0);
    }

    @Test
    void aWindowAndAQuotaCountWhatWasReportedUpToOneLimitMore() {
        Rule window = rule(new SlidingWindowLimit(100, Duration.ofHours(1)));
        Rule quota = rule(CalendarQuotaLimit.of("q.", 100, "day", "UTC", null, null));
        for (Rule rule : List.of(window, quota)) {
            Check one = check(rule, 1);
            withoutStore.debit(List.of(new FallbackCharges.Charge(one, 99, 0)));
            assertThat(withoutStore.decide(List.of(one)).allowed()).as(rule.limit().shape() + ": 1 left").isTrue();
            assertThat(withoutStore.decide(List.of(one)).allowed()).as(rule.limit().shape() + ": none left").isFalse();
        }
    }

    @Test
    void aChargeTheStoreRefusesIsHeldHereAndStillReportedAsFailed() {
        Rule rule = rule(new TokenBucketLimit(1000, 1000, Duration.ofHours(1)));
        Check minimum = check(rule, 10);
        StoreBreaker breaker = new StoreBreaker("held-here", StoreBreaker.Settings.DEFAULTS, clock::get);
        FailSafeStore failSafe = new FailSafeStore(checks -> reactor.core.publisher.Mono.error(
                new StoreNotConnectedException("down")), withoutStore, Duration.ofMillis(100), breaker,
                StoreMetrics.NONE, FallbackCharges.NONE, clock::get);
        FallbackCharges down = charges -> reactor.core.publisher.Mono.error(new StoreNotConnectedException("down"));
        Throwable failure = failSafe.orHeldHere(down).charge(List.of(new FallbackCharges.Charge(minimum, 995, 0)))
                .then(reactor.core.publisher.Mono.<Throwable>empty()).onErrorResume(reactor.core.publisher.Mono::just)
                .block(Duration.ofSeconds(5));
        assertThat(failure).as("the caller still learns the store did not take it").isNotNull();
        Verdict verdict = failSafe.evaluate(List.of(minimum)).block(Duration.ofSeconds(5));
        assertThat(verdict.allowed()).as("5 left of 1,000 for a request of 10, decided by the fallback").isFalse();
    }
}
