package dev.ratelimiter.mvc;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.mvc.MvcRequestLifecycle.Progress;
import dev.ratelimiter.mvc.MvcRequestLifecycle.Routing;
import dev.ratelimiter.mvc.MvcRequestLifecycle.Ruling;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every transition of the MVC request's state machine, and the races the integration tests found on Tomcat and Redis
 * (HedgedRouteIntegrationTest, MvcRequestEndIntegrationTest, ComposedRoutesIntegrationTest,
 * ErrorPagesOfAdmittedRequestsIntegrationTest), without a servlet container: the gates, tickets and permit owners
 * are fakes that count what is asked of them. The randomized races are in {@link MvcRequestLifecycleRacesTest}.
 */
class MvcRequestLifecycleTest {

    static final RefusalRenderer.Rendered TOO_MANY = rendered(429);
    static final RefusalRenderer.Rendered OVERLOADED = rendered(503);
    static final Check CHECK = new Check(new Rule("burst", "burst", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("burst.", 10, 10, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL),
            new BucketKey("client", "burst"), 1, false);

    private final MvcRequestLifecycle request = new MvcRequestLifecycle();

    static RefusalRenderer.Rendered rendered(int status) {
        return new RefusalRenderer.Rendered(HttpStatusCode.valueOf(status), new HttpHeaders(), new byte[0]);
    }

    /** A gate that answers one ruling and counts the namings it was asked to decide. */
    static final class Gate implements MvcRequestLifecycle.RouteGate {

        final List<String> asked = new CopyOnWriteArrayList<>();
        private final Function<String, Ruling> ruling;

        Gate(Ruling ruling) {
            this(routeId -> ruling);
        }

        Gate(Function<String, Ruling> ruling) {
            this.ruling = ruling;
        }

        @Override
        public Ruling decide(String routeId) {
            asked.add(routeId);
            return ruling.apply(routeId);
        }
    }

    /** A load shedder's ticket: how often, and how, it was released. */
    static final class Ticket implements MvcRequestLifecycle.Held {

        final AtomicInteger releases = new AtomicInteger();
        volatile boolean overloaded;
        volatile boolean sample;

        @Override
        public void release(boolean overloaded, boolean sample) {
            this.overloaded = overloaded;
            this.sample = sample;
            releases.incrementAndGet();
        }
    }

    /** Where a permit was granted: how often it was given back. */
    static final class Owner implements RequestPermits.Owner {

        final AtomicInteger givenBack = new AtomicInteger();

        @Override
        public void giveBack(List<Check> permits) {
            givenBack.incrementAndGet();
        }
    }

    static Owner grant(MvcRequestLifecycle request) {
        Owner owner = new Owner();
        request.permits().granted(owner, List.of(CHECK));
        return owner;
    }

    /** Runs {@code work} on a thread of its own, once it is started. */
    static Thread start(String name, Runnable work) {
        Thread thread = new Thread(work, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /** Until {@code thread} is parked (waiting for the decision's lock), or fails the test after 5 s. */
    static void awaitParked(Thread thread) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (thread.getState() != Thread.State.WAITING && thread.getState() != Thread.State.TIMED_WAITING) {
            assertThat(thread.isAlive()).as("%s still running", thread.getName()).isTrue();
            assertThat(System.nanoTime()).as("%s parked within 5 s", thread.getName()).isLessThan(deadline);
            Thread.sleep(1);
        }
    }

    @Nested
    class Routes {

        @Test
        void aNewRequestIsUnarmedAndInTheServletAndARouteNamedUnarmedGoesThroughUndecided() {
            assertThat(request.routing()).isEqualTo(Routing.UNARMED);
            assertThat(request.progress()).isEqualTo(Progress.SERVING);
            assertThat(request.routeNamed("plain")).isNull();
            assertThat(request.routing()).isEqualTo(Routing.UNARMED);
            assertThat(request.admitted()).isFalse();
            assertThat(request.refusal()).isNull();
        }

        @Test
        void armingMakesTheNextNamingDecidedOnceAndAnAdmissionDisarms() {
            Gate gate = new Gate(Ruling.ADMITTED);
            request.arm(gate);
            assertThat(request.routing()).isEqualTo(Routing.ARMED);

            assertThat(request.routeNamed("api")).isNull();
            assertThat(gate.asked).containsExactly("api");
            assertThat(request.routing()).isEqualTo(Routing.UNARMED);
            assertThat(request.admitted()).isTrue();

            assertThat(request.routeNamed("api")).as("named again: not decided twice").isNull();
            assertThat(gate.asked).hasSize(1);
        }

        @Test
        void aRouteTheLimiterDoesNotLimitGoesThroughWithoutAdmittingTheRequest() {
            Gate gate = new Gate(Ruling.UNLIMITED);
            request.arm(gate);
            assertThat(request.routeNamed("opted-out")).isNull();
            assertThat(gate.asked).containsExactly("opted-out");
            assertThat(request.routing()).isEqualTo(Routing.UNARMED);
            assertThat(request.admitted()).isFalse();
        }

        @Test
        void aRefusalIsFinalEveryLaterNamingIsRefusedAgainAndNoGateIsAskedAgain() {
            request.arm(new Gate(Ruling.refused(TOO_MANY)));
            assertThat(request.routeNamed("api")).isSameAs(TOO_MANY);
            assertThat(request.routing()).isEqualTo(Routing.REFUSED);
            assertThat(request.refusal()).isSameAs(TOO_MANY);

            // a filter that retries its chain names the route again
            assertThat(request.routeNamed("api")).isSameAs(TOO_MANY);
            // a forward (or a fallback) arms the request for another route
            Gate forwarded = new Gate(Ruling.ADMITTED);
            request.disarm();
            request.arm(forwarded);
            assertThat(request.routing()).isEqualTo(Routing.REFUSED);
            assertThat(request.routeNamed("limited")).isSameAs(TOO_MANY);
            assertThat(forwarded.asked).as("a refused request is never decided again, nor admitted").isEmpty();
            assertThat(request.admitted()).isFalse();
        }

        @Test
        void disarmingMakesTheNextNamingUndecided() {
            Gate gate = new Gate(Ruling.refused(TOO_MANY));
            request.arm(gate);
            request.disarm();
            assertThat(request.routing()).isEqualTo(Routing.UNARMED);
            assertThat(request.routeNamed("tried-while-matching")).isNull();
            assertThat(gate.asked).isEmpty();
        }

        @Test
        void armingAgainReplacesTheGateAForwardIsDecidedOnTheRouteItReaches() {
            Gate optOut = new Gate(Ruling.UNLIMITED);
            request.arm(optOut);
            assertThat(request.routeNamed("optout")).isNull();
            Gate first = new Gate(Ruling.ADMITTED);
            Gate target = new Gate(Ruling.refused(TOO_MANY));
            request.arm(first);
            request.arm(target);
            assertThat(request.routeNamed("limited")).isSameAs(TOO_MANY);
            assertThat(first.asked).isEmpty();
            assertThat(target.asked).containsExactly("limited");
            assertThat(optOut.asked).containsExactly("optout");
        }

        @Test
        void admittedOnOneRouteAndRefusedOnTheRouteAForwardReachesIsBothAdmittedAndRefused() {
            request.arm(new Gate(Ruling.ADMITTED));
            assertThat(request.routeNamed("first")).isNull();
            request.arm(new Gate(Ruling.refused(TOO_MANY)));
            assertThat(request.routeNamed("second")).isSameAs(TOO_MANY);
            assertThat(request.admitted()).isTrue();
            assertThat(request.routing()).isEqualTo(Routing.REFUSED);
        }

        @Test
        void aGateThatFailsLeavesTheRequestUnarmedAndUnrefused() {
            request.arm(routeId -> {
                throw new IllegalStateException("the renderer failed");
            });
            assertThatThrownBy(() -> request.routeNamed("api")).hasMessage("the renderer failed");
            assertThat(request.routing()).isEqualTo(Routing.UNARMED);
            assertThat(request.refusal()).isNull();
            assertThat(request.admitted()).isFalse();
            // as before the extraction: a naming after it goes through undecided
            assertThat(request.routeNamed("api")).isNull();
        }

        @Test
        void aNamingOnTheDecidingThreadItselfGoesThroughWithoutWaitingForItself() {
            AtomicReference<RefusalRenderer.Rendered> inner = new AtomicReference<>(TOO_MANY);
            AtomicReference<Routing> during = new AtomicReference<>();
            request.arm(routeId -> {
                // e.g. a response customizer that sets the route id while the refusal is rendered
                inner.set(request.routeNamed("inner"));
                during.set(request.routing());
                return Ruling.ADMITTED;
            });
            assertThat(request.routeNamed("outer")).isNull();
            assertThat(inner.get()).isNull();
            assertThat(during.get()).isEqualTo(Routing.DECIDING);
            assertThat(request.routing()).isEqualTo(Routing.UNARMED);
        }

        @Test
        void aRefusalDecidedWithinAnotherDecisionOnTheSameThreadStands() {
            request.arm(routeId -> {
                request.arm(new Gate(Ruling.refused(TOO_MANY)));
                assertThat(request.routeNamed("inner")).isSameAs(TOO_MANY);
                return Ruling.ADMITTED;
            });
            assertThat(request.routeNamed("outer")).isSameAs(TOO_MANY);
            assertThat(request.routing()).isEqualTo(Routing.REFUSED);
        }
    }

    @Nested
    class ErrorPages {

        @Test
        void theErrorPageOfARefusedRequestIsRefusedAsItWasWithoutADecision() {
            request.arm(new Gate(Ruling.refused(TOO_MANY)));
            request.routeNamed("api");
            MvcRequestLifecycle errorPage = new MvcRequestLifecycle(request, () -> OVERLOADED);
            assertThat(errorPage.routing()).isEqualTo(Routing.REFUSED);
            Gate errors = new Gate(Ruling.ADMITTED);
            errorPage.arm(errors);
            assertThat(errorPage.routeNamed("errors")).isSameAs(TOO_MANY);
            assertThat(errors.asked).isEmpty();
        }

        @Test
        void theErrorPageOfAnAdmittedRequestIsDecidedAndItsRefusalIsTheFailuresOwnAnswer() {
            request.arm(new Gate(Ruling.ADMITTED));
            request.routeNamed("broken");
            RefusalRenderer.Rendered failure = rendered(500);
            MvcRequestLifecycle errorPage = new MvcRequestLifecycle(request, () -> failure);
            assertThat(errorPage.routing()).isEqualTo(Routing.UNARMED);
            Gate errors = new Gate(Ruling.refused(TOO_MANY));
            errorPage.arm(errors);
            assertThat(errorPage.routeNamed("errors")).as("never a 429 to a request let through").isSameAs(failure);
            assertThat(errors.asked).as("decided, so its call counts at the error route").containsExactly("errors");
            assertThat(errorPage.refusal()).isSameAs(failure);
            assertThat(errorPage.routeNamed("errors")).isSameAs(failure);
        }

        @Test
        void theErrorPageOfAnAdmittedRequestThatItsRouteAdmitsGoesThrough() {
            request.arm(new Gate(Ruling.ADMITTED));
            request.routeNamed("broken");
            MvcRequestLifecycle errorPage = new MvcRequestLifecycle(request, () -> rendered(500));
            errorPage.arm(new Gate(Ruling.ADMITTED));
            assertThat(errorPage.routeNamed("errors")).isNull();
            assertThat(errorPage.admitted()).isTrue();
        }

        @Test
        void theErrorPageOfARequestNoLimitedRouteAdmittedIsRefusedAsAnyRequestIs() {
            AtomicInteger failureAnswers = new AtomicInteger();
            MvcRequestLifecycle errorPage = new MvcRequestLifecycle(request, () -> {
                failureAnswers.incrementAndGet();
                return rendered(500);
            });
            errorPage.arm(new Gate(Ruling.refused(TOO_MANY)));
            assertThat(errorPage.routeNamed("errors")).isSameAs(TOO_MANY);
            assertThat(failureAnswers).as("the failure's answer is not even read").hasValue(0);
        }

        @Test
        void anErrorPageHasAProgressOfItsOwn() {
            request.end(null, () -> 500);
            MvcRequestLifecycle errorPage = new MvcRequestLifecycle(request, () -> rendered(500));
            assertThat(errorPage.progress()).isEqualTo(Progress.SERVING);
            assertThat(errorPage.upstreamCallStarted()).isTrue();
        }
    }

    @Nested
    class Ending {

        @Test
        void endingWithNoCallInProgressGivesEverythingBackOnce() {
            Owner owner = grant(request);
            Ticket ticket = new Ticket();
            request.hold(ticket);
            assertThat(request.end(null, () -> 200)).isTrue();
            assertThat(request.progress()).isEqualTo(Progress.OVER);
            assertThat(owner.givenBack).hasValue(1);
            assertThat(ticket.releases).hasValue(1);
            assertThat(ticket.overloaded).isFalse();
            assertThat(ticket.sample).isTrue();
            assertThat(request.permits().ended()).isTrue();
        }

        @Test
        void onlyTheFirstEndCountsTheStatusIsNotReadAgain() {
            Ticket ticket = new Ticket();
            request.hold(ticket);
            assertThat(request.end(null, () -> 200)).isTrue();
            assertThat(request.end(new IllegalStateException(), () -> {
                throw new AssertionError("the response may be recycled: not read again");
            })).isFalse();
            assertThat(ticket.releases).hasValue(1);
            assertThat(ticket.overloaded).isFalse();
        }

        @Test
        void aFailureOrA503Or504TellsTheShedderTheUpstreamWasOverloadedAClientGoneSaysNothing() {
            assertThat(released(null, 200)).containsExactly(false, true);
            assertThat(released(null, 429)).containsExactly(false, true);
            assertThat(released(null, 503)).containsExactly(true, true);
            assertThat(released(null, 504)).containsExactly(true, true);
            assertThat(released(new IllegalStateException("upstream failed"), 500)).containsExactly(true, true);
            assertThat(released(new IOException("broken pipe"), 200)).containsExactly(false, false);
            assertThat(released(new IOException("broken pipe"), 503)).containsExactly(true, false);
        }

        private List<Boolean> released(Throwable failure, int status) {
            MvcRequestLifecycle ended = new MvcRequestLifecycle();
            Ticket ticket = new Ticket();
            ended.hold(ticket);
            ended.end(failure, () -> status);
            assertThat(ticket.releases).hasValue(1);
            return List.of(ticket.overloaded, ticket.sample);
        }

        @Test
        void endingWhileAnUpstreamCallIsInProgressDrainsAndTheCallsReturnGivesEverythingBack() {
            Owner owner = grant(request);
            Ticket ticket = new Ticket();
            request.hold(ticket);
            assertThat(request.upstreamCallStarted()).isTrue();
            assertThat(request.end(null, () -> 503)).as("a timeout answered the client").isFalse();
            assertThat(request.progress()).isEqualTo(Progress.DRAINING);
            assertThat(owner.givenBack).as("the call still counts at the upstream").hasValue(0);
            assertThat(ticket.releases).hasValue(0);

            assertThat(request.upstreamCallEnded()).isTrue();
            assertThat(request.progress()).isEqualTo(Progress.OVER);
            assertThat(owner.givenBack).hasValue(1);
            assertThat(ticket.releases).hasValue(1);
            assertThat(ticket.overloaded).as("the status read when the servlet was done").isTrue();
        }

        @Test
        void whileDrainingOnlyTheLastCallToReturnEndsTheRequest() {
            Ticket ticket = new Ticket();
            request.hold(ticket);
            request.upstreamCallStarted();
            request.upstreamCallStarted();
            request.end(null, () -> 200);
            assertThat(request.upstreamCallEnded()).isFalse();
            assertThat(request.progress()).isEqualTo(Progress.DRAINING);
            assertThat(ticket.releases).hasValue(0);
            assertThat(request.upstreamCallEnded()).isTrue();
            assertThat(ticket.releases).hasValue(1);
        }

        @Test
        void whileDrainingARouteMayStillBeNamedAndACallStarted() {
            request.upstreamCallStarted();
            request.end(null, () -> 200);
            assertThat(request.routeMayBeNamed()).isTrue();
            assertThat(request.upstreamCallStarted()).as("async work of the request still running").isTrue();
            request.upstreamCallEnded();
            assertThat(request.progress()).isEqualTo(Progress.DRAINING);
            request.upstreamCallEnded();
            assertThat(request.progress()).isEqualTo(Progress.OVER);
        }

        @Test
        void aCallReturningWhileTheServletIsStillAtWorkEndsNothing() {
            Ticket ticket = new Ticket();
            request.hold(ticket);
            request.upstreamCallStarted();
            assertThat(request.upstreamCallEnded()).isFalse();
            assertThat(request.progress()).isEqualTo(Progress.SERVING);
            assertThat(ticket.releases).hasValue(0);
            assertThat(request.end(null, () -> 200)).isTrue();
            assertThat(ticket.releases).hasValue(1);
        }

        @Test
        void aCallReturnedThatNeverStartedDoesNotCountBelowZero() {
            assertThat(request.upstreamCallEnded()).isFalse();
            request.upstreamCallStarted();
            assertThat(request.end(null, () -> 200)).as("one call in progress, not none").isFalse();
            assertThat(request.progress()).isEqualTo(Progress.DRAINING);
        }

        @Test
        void overNoRouteMayBeNamedAndNoUpstreamCallStarts() {
            request.end(null, () -> 503);
            assertThat(request.routeMayBeNamed()).isFalse();
            assertThat(request.upstreamCallStarted()).isFalse();
            assertThat(request.upstreamCallEnded()).isFalse();
            assertThat(request.progress()).isEqualTo(Progress.OVER);
        }

        @Test
        void permitsMadeAfterTheRequestIsOverAreEndedAtOnceAndAGrantToThemGivenBackAtOnce() {
            request.end(null, () -> 200);
            RequestPermits permits = request.permits();
            assertThat(permits.ended()).isTrue();
            Owner owner = grant(request);
            assertThat(owner.givenBack).hasValue(1);
            assertThat(permits.held()).isZero();
        }

        @Test
        void aTicketHeldAfterTheRequestIsOverIsReleasedAtOnceWithoutASample() {
            request.end(null, () -> 200);
            Ticket late = new Ticket();
            request.hold(late);
            assertThat(late.releases).hasValue(1);
            assertThat(late.overloaded).isFalse();
            assertThat(late.sample).isFalse();
        }

        @Test
        void aRequestHoldsATicketPerRouteItReached() {
            Ticket first = new Ticket();
            Ticket forwarded = new Ticket();
            request.hold(first);
            request.hold(forwarded);
            request.end(null, () -> 200);
            assertThat(List.of(first.releases.get(), forwarded.releases.get())).containsExactly(1, 1);
        }
    }

    /** The races found on Tomcat, each forced into one order with latches. */
    @Nested
    class Races {

        /** HedgedRouteIntegrationTest: the second thread was let through undecided while the first waited. */
        @Test
        void twoThreadsNamingTheRouteAtOnceAreDecidedOnceAndTheSecondTakesTheRefusal() throws Exception {
            CountDownLatch deciding = new CountDownLatch(1);
            CountDownLatch storeAnswers = new CountDownLatch(1);
            Gate gate = new Gate(routeId -> {
                deciding.countDown();
                await(storeAnswers);
                return Ruling.refused(TOO_MANY);
            });
            request.arm(gate);
            AtomicReference<RefusalRenderer.Rendered> first = new AtomicReference<>();
            AtomicReference<RefusalRenderer.Rendered> second = new AtomicReference<>(rendered(200));
            Thread one = start("hedge-1", () -> first.set(request.routeNamed("hedged")));
            assertThat(deciding.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(request.routing()).isEqualTo(Routing.DECIDING);
            Thread two = start("hedge-2", () -> second.set(request.routeNamed("hedged")));
            awaitParked(two);
            storeAnswers.countDown();
            one.join(5000);
            two.join(5000);
            assertThat(first.get()).isSameAs(TOO_MANY);
            assertThat(second.get()).as("the second try is refused too, never let through").isSameAs(TOO_MANY);
            assertThat(gate.asked).as("one decision").hasSize(1);
        }

        @Test
        void twoThreadsNamingTheRouteAtOnceAreDecidedOnceAndBothGoThroughWhenAdmitted() throws Exception {
            CountDownLatch deciding = new CountDownLatch(1);
            CountDownLatch storeAnswers = new CountDownLatch(1);
            Gate gate = new Gate(routeId -> {
                deciding.countDown();
                await(storeAnswers);
                return Ruling.ADMITTED;
            });
            request.arm(gate);
            AtomicReference<RefusalRenderer.Rendered> second = new AtomicReference<>(TOO_MANY);
            Thread one = start("hedge-1", () -> request.routeNamed("hedged"));
            assertThat(deciding.await(5, TimeUnit.SECONDS)).isTrue();
            Thread two = start("hedge-2", () -> second.set(request.routeNamed("hedged")));
            awaitParked(two);
            storeAnswers.countDown();
            one.join(5000);
            two.join(5000);
            assertThat(second.get()).isNull();
            assertThat(gate.asked).as("charged once").hasSize(1);
        }

        /**
         * The client goes away (or a timeout answers it) while the store decides: the request ends without waiting
         * for the decision, and what the decision takes after that (its permits, its ticket) goes back at once.
         */
        @Test
        void theResponseEndsWhileTheDecisionIsPendingWhatTheDecisionTakesAfterGoesBackAtOnce() throws Exception {
            CountDownLatch deciding = new CountDownLatch(1);
            CountDownLatch storeAnswers = new CountDownLatch(1);
            RequestPermits early = request.permits();
            Owner owner = new Owner();
            Ticket ticket = new Ticket();
            request.arm(routeId -> {
                deciding.countDown();
                await(storeAnswers);
                early.granted(owner, List.of(CHECK));
                request.hold(ticket);
                return Ruling.ADMITTED;
            });
            AtomicReference<RefusalRenderer.Rendered> named = new AtomicReference<>(TOO_MANY);
            Thread worker = start("async-work", () -> named.set(request.routeNamed("api")));
            assertThat(deciding.await(5, TimeUnit.SECONDS)).isTrue();

            assertThat(request.end(new IOException("client gone"), () -> 200)).as("not held up by the decision")
                    .isTrue();
            assertThat(request.progress()).isEqualTo(Progress.OVER);

            storeAnswers.countDown();
            worker.join(5000);
            assertThat(named.get()).isNull();
            assertThat(owner.givenBack).as("the permit granted after the end").hasValue(1);
            assertThat(ticket.releases).hasValue(1);
            assertThat(request.upstreamCallStarted()).as("its upstream call is not made").isFalse();
            assertThat(request.routeMayBeNamed()).isFalse();
        }

        /** A store reply that lands after the request ended (a decision past its bound, cancelled). */
        @Test
        void permitsGrantedAfterTheRequestEndedGoBackAtOnceAndOnce() {
            RequestPermits permits = request.permits();
            Owner before = grant(request);
            request.end(null, () -> 200);
            Owner after = new Owner();
            permits.granted(after, List.of(CHECK));
            assertThat(before.givenBack).hasValue(1);
            assertThat(after.givenBack).hasValue(1);
            request.end(null, () -> 200);
            request.upstreamCallEnded();
            assertThat(before.givenBack).as("once").hasValue(1);
        }

        /** ComposedRoutesIntegrationTest: a retry, a forward or a fallback after the refusal reached the upstream. */
        @Test
        void aSecondRouteNamedAfterARefusalIsRefusedOnAnyThread() throws Exception {
            request.arm(new Gate(Ruling.refused(TOO_MANY)));
            assertThat(request.routeNamed("api")).isSameAs(TOO_MANY);
            Gate fallback = new Gate(Ruling.ADMITTED);
            request.arm(fallback);
            AtomicReference<RefusalRenderer.Rendered> elsewhere = new AtomicReference<>();
            Thread async = start("async", () -> elsewhere.set(request.routeNamed("fallback")));
            async.join(5000);
            assertThat(elsewhere.get()).isSameAs(TOO_MANY);
            assertThat(fallback.asked).isEmpty();
        }

        /** Arming and disarming (a forward's matching on another thread) never wait for a decision in progress. */
        @Test
        void armingAndDisarmingDuringADecisionDoNotWaitAndSetTheGateForTheNextNaming() throws Exception {
            CountDownLatch deciding = new CountDownLatch(1);
            CountDownLatch storeAnswers = new CountDownLatch(1);
            request.arm(routeId -> {
                deciding.countDown();
                await(storeAnswers);
                return Ruling.ADMITTED;
            });
            Thread worker = start("deciding", () -> request.routeNamed("first"));
            assertThat(deciding.await(5, TimeUnit.SECONDS)).isTrue();
            request.disarm();
            Gate next = new Gate(Ruling.refused(TOO_MANY));
            request.arm(next);
            assertThat(request.routing()).as("still deciding the first").isEqualTo(Routing.DECIDING);
            storeAnswers.countDown();
            worker.join(5000);
            assertThat(request.routing()).as("armed for the next naming").isEqualTo(Routing.ARMED);
            assertThat(request.routeNamed("second")).isSameAs(TOO_MANY);
            assertThat(next.asked).containsExactly("second");
        }

        @Test
        void disarmedDuringADecisionTheRequestIsUnarmedAfterIt() throws Exception {
            CountDownLatch deciding = new CountDownLatch(1);
            CountDownLatch storeAnswers = new CountDownLatch(1);
            request.arm(routeId -> {
                deciding.countDown();
                await(storeAnswers);
                return Ruling.ADMITTED;
            });
            Thread worker = start("deciding", () -> request.routeNamed("first"));
            assertThat(deciding.await(5, TimeUnit.SECONDS)).isTrue();
            request.disarm();
            storeAnswers.countDown();
            worker.join(5000);
            assertThat(request.routing()).isEqualTo(Routing.UNARMED);
        }

        /** MvcRequestEndIntegrationTest: a timeout ended the request while its worker's call went on. */
        @Test
        void aTimeoutEndsTheServletRequestWhileTheWorkersCallGoesOnWhichKeepsThePermits() throws Exception {
            Owner owner = grant(request);
            CountDownLatch calling = new CountDownLatch(1);
            CountDownLatch upstreamAnswers = new CountDownLatch(1);
            Thread worker = start("worker", () -> {
                if (request.upstreamCallStarted()) {
                    calling.countDown();
                    await(upstreamAnswers);
                    request.upstreamCallEnded();
                }
            });
            assertThat(calling.await(5, TimeUnit.SECONDS)).isTrue();
            request.end(null, () -> 503);
            assertThat(owner.givenBack).hasValue(0);
            upstreamAnswers.countDown();
            worker.join(5000);
            assertThat(owner.givenBack).hasValue(1);
        }

        /** MvcRequestEndIntegrationTest: async work starting after the timeout answered reached the upstream. */
        @Test
        void asyncWorkStartingAfterTheRequestIsOverNamesNoRouteAndCallsNoUpstream() {
            Gate gate = new Gate(Ruling.ADMITTED);
            request.arm(gate);
            request.end(null, () -> 503);
            assertThat(request.routeMayBeNamed()).isFalse();
            assertThat(request.upstreamCallStarted()).isFalse();
            assertThat(gate.asked).isEmpty();
        }
    }

    static void await(CountDownLatch latch) {
        try {
            if (!latch.await(5, TimeUnit.SECONDS)) {
                throw new AssertionError("latch not released within 5 s");
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
    }
}
