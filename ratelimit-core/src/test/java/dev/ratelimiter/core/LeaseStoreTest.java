package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local-mode share bookkeeping against a store whose answer the test holds back, so that requests can be decided
 * while a settle is in flight — the window in which a share could otherwise be spent twice.
 */
class LeaseStoreTest {

    private final AtomicLong nanos = new AtomicLong();
    private final Rule rule = new Rule("burst", "burst", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("burst.", 5, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
            StoreMode.LOCAL, 1);
    private final Check check = new Check(rule, new BucketKey(ClientIds.unkeyed().of("client"), "burst"), 1, false);
    private final HeldBackStore store = new HeldBackStore();
    private final LeaseStore leases = new LeaseStore(store,
            new WithoutStore(new LocalBucketStore(100), () -> 1, StoreMetrics.NONE, () -> Duration.ofSeconds(1)),
            () -> 1, Duration.ofMillis(100), 1_000, nanos::get);

    @Test
    void provisionalTokensSpentWhileTheFirstSettleIsInFlightAreNotSpentAgainFromTheGrant() {
        assertThat(admitted(3)).isEqualTo(3);
        List<Integer> settled = new ArrayList<>();
        leases.settle().subscribe(settled::add);
        assertThat(store.reports).singleElement().extracting(SettleClient.Report::provisionalSpent).isEqualTo(3.0);

        assertThat(admitted(2)).as("the rest of the provisional allowance, while the store has not answered").isEqualTo(2);
        // The store saw 3 of 5 spent and grants the 2 left: those were spent during the flight already.
        store.answer(new SettleClient.Grant(2, 0, 0));
        assertThat(settled).containsExactly(1);

        assertThat(admitted(10)).as("the bucket of 5 is spent").isZero();
    }

    @Test
    void spendDuringTheFlightBeyondTheGrantIsChargedAtTheNextSettle() {
        assertThat(admitted(3)).isEqualTo(3);
        leases.settle().subscribe();
        assertThat(admitted(2)).isEqualTo(2);
        store.answer(new SettleClient.Grant(1, 0, 0));

        nanos.addAndGet(Duration.ofMillis(100).toNanos());
        store.reports.clear();
        leases.settle().subscribe();
        assertThat(store.reports).singleElement().satisfies(report -> {
            assertThat(report.provisionalSpent()).as("one spent that no grant covered").isEqualTo(1.0);
            assertThat(report.held()).isZero();
        });
    }

    @Test
    void aGrantArrivingWithNothingSpentDuringTheFlightIsSpendableInFull() {
        assertThat(admitted(2)).isEqualTo(2);
        leases.settle().subscribe();
        store.answer(new SettleClient.Grant(3, 0, 0));
        assertThat(admitted(10)).isEqualTo(3);
    }

    @Test
    void aSparseClientIsSettledWhileInUseAndOnceToGiveItsShareBackThenNotAtAll() {
        assertThat(admitted(1)).isEqualTo(1);
        settleAnswering(new SettleClient.Grant(3, 0, 0));
        assertThat(store.reports).singleElement().extracting(SettleClient.Report::demand).isEqualTo(1L);

        store.reports.clear();
        settleAnswering(new SettleClient.Grant(0, 0, 0));
        assertThat(store.reports).as("idle: its 3 tokens go back").singleElement()
                .extracting(SettleClient.Report::returned).isEqualTo(3.0);
        for (int i = 0; i < 5; i++) {
            store.reports.clear();
            settleAnswering(new SettleClient.Grant(0, 0, 0));
            assertThat(store.reports).as("dormant: nothing to settle").isEmpty();
        }

        assertThat(admitted(1)).as("its next request is not refused for having paused").isEqualTo(1);
        store.reports.clear();
        settleAnswering(new SettleClient.Grant(2, 0, 0));
        assertThat(store.reports).singleElement().satisfies(report -> {
            assertThat(report.demand()).isEqualTo(1);
            assertThat(report.provisionalSpent()).as("the reactivation spend is paid for").isEqualTo(1.0);
        });
    }

    @Test
    void aShareEmptiedByLostSettlesServesItsNextRequestAfterAPauseFromItsFairRefill() {
        // 10 per second, two instances: this one's fair part is 5 per second, at most 5 at once
        Rule quick = new Rule("quick", "quick", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("quick.", 10, 10, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.LOCAL, 1);
        Check sparse = new Check(quick, new BucketKey(ClientIds.unkeyed().of("sparse"), "quick"), 1, false);
        LeaseStore two = new LeaseStore(store, new WithoutStore(new LocalBucketStore(100), () -> 2, StoreMetrics.NONE,
                () -> Duration.ofSeconds(1)), () -> 2, Duration.ofMillis(100), 1_000, nanos::get);
        assertThat(two.decide(List.of(sparse)).allowed()).isTrue();
        // Redis paused: two settles time out (it applies their charges later, and their grants are lost) ...
        for (int i = 0; i < 2; i++) {
            nanos.addAndGet(Duration.ofMillis(100).toNanos());
            two.settle().subscribe();
            store.fail();
        }
        // ... so the first settle after it grants nothing and finds the pool empty
        nanos.addAndGet(Duration.ofMillis(100).toNanos());
        two.settle().subscribe();
        store.answer(new SettleClient.Grant(0, 0, 0));
        // the share is dry now; its client comes back 0.6 s after its last request (store's pool refilled meanwhile)
        nanos.addAndGet(Duration.ofMillis(300).toNanos());
        assertThat(Stream.generate(() -> two.decide(List.of(sparse)).allowed()).limit(10).filter(a -> a).count())
                .as("after 0.6 s idle: 0.6 s × 5/s = 3 refilled locally").isEqualTo(3);
        nanos.addAndGet(Duration.ofMillis(100).toNanos());
        store.reports.clear();
        two.settle().subscribe();
        assertThat(store.reports).singleElement().extracting(SettleClient.Report::provisionalSpent)
                .as("and charged at the settle").isEqualTo(3.0);
    }

    @Test
    void tokensGivenBackInACallThatMayHaveRunAreNotGivenBackAgain() {
        reportGivingBackTwo();
        store.answer(SettleClient.Grant.UNKNOWN);

        store.reports.clear();
        settleAnswering(new SettleClient.Grant(0, 0, 0));
        assertThat(store.reports).singleElement().satisfies(report -> {
            assertThat(report.returned()).as("the store may have pooled them already: counted twice, a client "
                    + "could pass beyond its quota").isZero();
            assertThat(report.demand()).as("the demand is put back: it only weighs the fair part").isEqualTo(1);
        });
    }

    @Test
    void tokensGivenBackInACallNeverSentAreGivenBackAtTheNextSettle() {
        reportGivingBackTwo();
        store.answer(SettleClient.Grant.NOT_SENT);

        store.reports.clear();
        settleAnswering(new SettleClient.Grant(0, 0, 0));
        assertThat(store.reports).singleElement().extracting(SettleClient.Report::returned).isEqualTo(2.0);
    }

    @Test
    void aSettleThatFailsAsAWholeGivesNothingBackTwice() {
        reportGivingBackTwo();
        store.fail();

        store.reports.clear();
        settleAnswering(new SettleClient.Grant(0, 0, 0));
        assertThat(store.reports).singleElement().extracting(SettleClient.Report::returned).isEqualTo(0.0);
    }

    /**
     * Settling by need: a share the store lets go silent (one instance alone on a bucket, holding at most half of it)
     * skips settles while it lasts, for at most its silence; anything the store must hear (a refusal, a failed settle, others on the bucket)
     * brings the report back at the next tick.
     */
    @Nested
    class SettlingByNeed {

        private final Duration interval = Duration.ofMillis(100);
        private final Duration silence = Duration.ofSeconds(2);
        private final Rule hundred = new Rule("hundred", "hundred", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("hundred.", 100, 100, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.LOCAL, 1);
        private final Check client = new Check(hundred, new BucketKey(ClientIds.unkeyed().of("client"), "hundred"),
                1, false);
        private final LeaseStore quiet = new LeaseStore(store, new WithoutStore(new LocalBucketStore(100), () -> 1,
                StoreMetrics.NONE, () -> Duration.ofSeconds(1)), () -> 1, interval, silence, 1_000, nanos::get);

        @Test
        void aShareAloneThatLastsIsNotSettledUntilItsSilenceEndsThenReportsItsRate() {
            grantedAfterFirstSight(50, true);
            int ticks = 0;
            while (store.reports.isEmpty() && ticks < 40) {
                spend(1);
                tick();
                ticks++;
            }
            assertThat(ticks).as("ticks until the share was reported (1 request a tick, 50 tokens held)")
                    .isEqualTo(19);
            assertThat(store.reports).singleElement().satisfies(report -> {
                assertThat(report.demand()).as("19 requests in 1.9 s: one per interval, as others count it")
                        .isEqualTo(1);
                assertThat(report.want()).as("its need and 1.5 × its rate (10/s) over its silence (2 s)").isEqualTo(31);
                assertThat(report.silenceMicros()).isEqualTo(2_000_000);
                assertThat(report.held()).isEqualTo(31.0);
            });
        }

        @Test
        void aShareAloneSettlesEarlyAsItApproachesItsEnd() {
            grantedAfterFirstSight(10, true);
            spend(2);
            tick();
            assertThat(store.reports).as("8 left at 2 a tick: lasts the next three ticks").isEmpty();
            spend(2);
            tick();
            assertThat(store.reports).as("6 left at 2 a tick: not three more ticks").singleElement()
                    .extracting(SettleClient.Report::held).isEqualTo(6.0);
        }

        @Test
        void aRefusedRequestSettlesAtTheNextTick() {
            grantedAfterFirstSight(2, true);
            assertThat(spend(3)).isEqualTo(2);
            tick();
            assertThat(store.reports).as("a request ran short").singleElement()
                    .extracting(SettleClient.Report::demand).isEqualTo(3L);
        }

        @Test
        void aShareTheStoreDoesNotLetGoSilentIsSettledEveryInterval() {
            grantedAfterFirstSight(50, false);
            for (int i = 0; i < 5; i++) {
                spend(1);
                tick();
                assertThat(store.reports).as("tick %d", i).singleElement().extracting(SettleClient.Report::demand)
                        .isEqualTo(1L);
                store.answer(new SettleClient.Grant(1, 0, 0, false));
                store.reports.clear();
            }
        }

        @Test
        void aShareWhoseSilenceEndingSettleFailedReportsAgainAtTheNextTick() {
            grantedAfterFirstSight(50, true);
            for (int i = 0; i < 19; i++) {
                spend(1);
                tick();
            }
            assertThat(store.reports).hasSize(1);
            store.fail();
            store.reports.clear();
            spend(1);
            tick();
            assertThat(store.reports).as("the store may count this instance silent since its last settle")
                    .hasSize(1);
        }

        @Test
        void aShareAloneWhoseClientPausesForSixGapsGivesItsTokensBack() {
            grantedAfterFirstSight(50, true);
            spend(1);
            tick();
            assertThat(store.reports).isEmpty();
            // requests 100 ms apart at the first settle: a pause of 600 ms means the client has gone
            int quietTicks = 1;
            while (store.reports.isEmpty() && quietTicks < 40) {
                tick();
                quietTicks++;
            }
            assertThat(quietTicks).as("ticks from the last request until the share is reported").isEqualTo(7);
            assertThat(store.reports).singleElement().extracting(SettleClient.Report::demand).isEqualTo(1L);
            store.answer(new SettleClient.Grant(0, 0, 50, true));
            store.reports.clear();
            tick();
            assertThat(store.reports).as("the pause goes on: everything back to the pool").singleElement()
                    .satisfies(report -> {
                        assertThat(report.demand()).isZero();
                        assertThat(report.returned()).isEqualTo(49.0);
                    });
        }

        @Test
        void aBurstAfterAQuietSpellIsReportedAsABurstNotSpreadOverTheSpell() {
            grantedAfterFirstSight(50, false);
            for (int i = 0; i < 5; i++) {
                tick(); // idle: the share goes back at the first of these, then nothing to tell
                if (!store.reports.isEmpty()) {
                    store.answer(new SettleClient.Grant(0, 0, 100, false));
                    store.reports.clear();
                }
            }
            spend(40);
            tick();
            assertThat(store.reports).singleElement().extracting(SettleClient.Report::demand)
                    .as("40 requests in the last interval weigh 40 against the others, not 40 × 0.1 s / 0.6 s")
                    .isEqualTo(40L);
        }

        @Test
        void aReportWhoseAnswerWasLostIsSentAgainWithTheRateItCarried() {
            grantedAfterFirstSight(50, true);
            for (int i = 0; i < 19; i++) {
                spend(1);
                tick();
            }
            assertThat(store.reports).singleElement().extracting(SettleClient.Report::want).isEqualTo(31L);
            store.fail();
            store.reports.clear();
            tick(); // no request in this interval: the rate is still the one the lost report carried
            assertThat(store.reports).singleElement().extracting(SettleClient.Report::want)
                    .as("1 + 1.5 × 19 requests over 2 s × 2 s, not the need alone").isEqualTo(30L);
        }

        @Test
        void anInstanceThatSettlesEveryIntervalAsksForNoSilenceAndNoCap() {
            assertThat(leases.decide(List.of(check)).allowed()).isTrue();
            nanos.addAndGet(interval.toNanos());
            leases.settle().subscribe();
            assertThat(store.reports).singleElement().satisfies(report -> {
                assertThat(report.silenceMicros()).isZero();
                assertThat(report.want()).isEqualTo(Long.MAX_VALUE);
            });
        }

        /** One request on first sight (provisional), then the first settle, answered with {@code tokens}. */
        private void grantedAfterFirstSight(long tokens, boolean alone) {
            assertThat(spend(1)).isEqualTo(1);
            tick();
            assertThat(store.reports).singleElement().extracting(SettleClient.Report::provisionalSpent).isEqualTo(1.0);
            store.answer(new SettleClient.Grant(tokens, 0, 100 - tokens, alone));
            store.reports.clear();
        }

        private void tick() {
            nanos.addAndGet(interval.toNanos());
            quiet.settle().subscribe();
        }

        private int spend(int requests) {
            int allowed = 0;
            for (int i = 0; i < requests; i++) {
                allowed += quiet.decide(List.of(client)).allowed() ? 1 : 0;
            }
            return allowed;
        }
    }

    /** A share that holds 2 tokens, is told to give them back, and reports them returned in a settle left open. */
    private void reportGivingBackTwo() {
        assertThat(admitted(1)).isEqualTo(1);
        leases.settle().subscribe();
        // one provisional token spent, paid from the grant of 4: 3 left
        store.answer(new SettleClient.Grant(4, 0, 0));
        assertThat(admitted(1)).isEqualTo(1);
        nanos.addAndGet(Duration.ofMillis(100).toNanos());
        leases.settle().subscribe();
        store.answer(new SettleClient.Grant(0, 2, 0));
        admitted(1); // a request after the give-back: demand for the next report, allowed or not
        nanos.addAndGet(Duration.ofMillis(100).toNanos());
        store.reports.clear();
        leases.settle().subscribe();
        assertThat(store.reports).singleElement().satisfies(report -> {
            assertThat(report.returned()).isEqualTo(2.0);
            assertThat(report.demand()).isEqualTo(1);
        });
    }

    private void settleAnswering(SettleClient.Grant grant) {
        nanos.addAndGet(Duration.ofMillis(100).toNanos());
        leases.settle().subscribe();
        if (!store.reports.isEmpty()) {
            store.answer(grant);
        }
    }

    private int admitted(int requests) {
        int allowed = 0;
        for (int i = 0; i < requests; i++) {
            allowed += leases.decide(List.of(check)).allowed() ? 1 : 0;
        }
        return allowed;
    }

    /** A settle client that records what it is told and answers when the test says so. */
    private static final class HeldBackStore implements SettleClient {

        final List<Report> reports = new ArrayList<>();
        private Sinks.One<List<Grant>> pending;

        @Override
        public Mono<List<Grant>> settle(List<Report> reports) {
            this.reports.addAll(reports);
            pending = Sinks.one();
            return pending.asMono();
        }

        void answer(Grant grant) {
            pending.tryEmitValue(List.of(grant));
        }

        void fail() {
            pending.tryEmitError(new java.util.concurrent.TimeoutException("no answer in time"));
        }
    }
}
