package dev.ratelimiter.mvc;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.mvc.MvcRequestLifecycle.Progress;
import dev.ratelimiter.mvc.MvcRequestLifecycle.Routing;
import dev.ratelimiter.mvc.MvcRequestLifecycle.Ruling;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The request's events fired in random order from 2 to 4 threads at once, 2,000 times: whatever the order, every
 * permit and ticket goes back exactly once and only when the request is over (never while an upstream call of it is
 * in progress), each arming is decided at most once, a refusal is final (nothing named after it goes through, no gate
 * is asked after it), and the request counts as admitted only when a gate admitted it.
 *
 * <p>Each round's scripts come from a seed drawn from {@code -Dratelimit.test.seed} (a fixed default); a failure
 * names both. The interleaving itself is the machine's: a failing seed reproduces the scripts, not always the order.
 */
class MvcRequestLifecycleRacesTest {

    private static final int ROUNDS = 2_000;
    private static final long SEED = Long.getLong("ratelimit.test.seed", 20261205L);

    private enum Action {
        ARM, DISARM, NAME, CALL, PERMIT, HOLD, END
    }

    private enum Answer {
        UNLIMITED, ADMITTED, REFUSED, FAILS
    }

    private record Step(Action action, Answer answer, Throwable failure, int status) {
    }

    @Test
    void eventsInAnyOrderFromTwoToFourThreadsKeepTheInvariants() throws Exception {
        Random seeds = new Random(SEED);
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                long seed = seeds.nextLong();
                try {
                    new Round(seed).play(threads);
                }
                catch (Throwable failed) {
                    throw new AssertionError("round " + round + " failed, its scripts from seed " + seed
                            + " (the rounds' seeds from -Dratelimit.test.seed=" + SEED + ")", failed);
                }
            }
        }
        finally {
            threads.shutdownNow();
        }
    }

    private static final class Round {

        private final Random random;
        private final MvcRequestLifecycle request = new MvcRequestLifecycle();
        /** Orders what the threads see: every mark is after the one before it, on any thread. */
        private final AtomicLong clock = new AtomicLong();
        private final List<Gate> gates = new CopyOnWriteArrayList<>();
        private final List<Ticket> tickets = new CopyOnWriteArrayList<>();
        private final List<Owner> owners = new CopyOnWriteArrayList<>();
        /** The marks just after each upstream call started and just before it returned. */
        private final List<long[]> calls = new CopyOnWriteArrayList<>();
        private final List<Naming> namings = new CopyOnWriteArrayList<>();
        private final List<String> violations = new CopyOnWriteArrayList<>();
        /** Held from the start: when it is released, the request was over. */
        private final Ticket sentinel = new Ticket();

        Round(long seed) {
            this.random = new Random(seed);
        }

        void play(ExecutorService threads) throws Exception {
            request.hold(sentinel);
            tickets.add(sentinel);
            int count = 2 + random.nextInt(3);
            List<List<Step>> scripts = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                scripts.add(script());
            }
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> running = new ArrayList<>();
            for (List<Step> script : scripts) {
                running.add(threads.submit(() -> {
                    go.await();
                    for (Step step : script) {
                        run(step);
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> thread : running) {
                thread.get(10, TimeUnit.SECONDS);
            }
            // the servlet is done with every request, sooner or later
            request.end(null, () -> 200);
            check(scripts);
        }

        private List<Step> script() {
            List<Step> steps = new ArrayList<>();
            int length = 2 + random.nextInt(7);
            Action[] actions = Action.values();
            Answer[] answers = Answer.values();
            for (int i = 0; i < length; i++) {
                Action action = actions[random.nextInt(actions.length)];
                // arming and naming are what races most: more of them
                if (random.nextInt(3) == 0) {
                    action = random.nextBoolean() ? Action.ARM : Action.NAME;
                }
                Answer answer = random.nextInt(10) == 0 ? Answer.FAILS : answers[random.nextInt(answers.length - 1)];
                Throwable failure = switch (random.nextInt(4)) {
                    case 0 -> new IOException("client gone");
                    case 1 -> new IllegalStateException("upstream failed");
                    default -> null;
                };
                int status = new int[] { 200, 429, 500, 503, 504 }[random.nextInt(5)];
                steps.add(new Step(action, answer, failure, status));
            }
            return steps;
        }

        private void run(Step step) {
            switch (step.action()) {
                case ARM -> {
                    Gate gate = new Gate(step.answer());
                    gates.add(gate);
                    request.arm(gate);
                }
                case DISARM -> request.disarm();
                case NAME -> name();
                case CALL -> call();
                case PERMIT -> grant();
                case HOLD -> hold();
                case END -> request.end(step.failure(), step::status);
            }
            if (ThreadLocalRandom.current().nextBoolean()) {
                Thread.yield();
            }
        }

        private void name() {
            long start = clock.incrementAndGet();
            if (!request.routeMayBeNamed()) {
                return;
            }
            RefusalRenderer.Rendered answer;
            boolean failed = false;
            try {
                answer = request.routeNamed("route");
            }
            catch (IllegalStateException gateFailed) {
                answer = null;
                failed = true;
            }
            namings.add(new Naming(start, clock.incrementAndGet(), answer, failed));
            if (answer == null && !failed) {
                // let through: the route's upstream call follows
                call();
            }
        }

        private void call() {
            if (!request.upstreamCallStarted()) {
                return;
            }
            long started = clock.incrementAndGet();
            if (ThreadLocalRandom.current().nextBoolean()) {
                Thread.yield();
            }
            long returning = clock.incrementAndGet();
            calls.add(new long[] { started, returning });
            request.upstreamCallEnded();
        }

        private void grant() {
            Owner owner = new Owner();
            owners.add(owner);
            RequestPermits permits = request.permits();
            permits.granted(owner, List.of(MvcRequestLifecycleTest.CHECK));
        }

        private void hold() {
            Ticket ticket = new Ticket();
            tickets.add(ticket);
            request.hold(ticket);
        }

        private void check(List<List<Step>> scripts) {
            assertThat(violations).as("scripts %s", scripts).isEmpty();
            assertThat(request.progress()).as("over once the servlet is done and every call returned")
                    .isEqualTo(Progress.OVER);

            // permits and tickets back exactly once, and only when the request was over
            assertThat(tickets).allSatisfy(ticket -> assertThat(ticket.releases).as("releases of a ticket").hasValue(1));
            assertThat(owners).allSatisfy(owner -> assertThat(owner.givenBack).as("a permit given back").hasValue(1));
            assertThat(request.permits().ended()).isTrue();
            long over = sentinel.releasedAt;
            assertThat(calls).as("upstream calls (start, return) against the moment everything went back (%d)", over)
                    .allSatisfy(call -> assertThat(call[1]).isLessThan(over));

            // each arming decided at most once; no gate asked after a refusal
            assertThat(gates).allSatisfy(gate -> assertThat(gate.asked.get()).as("decisions by one gate").isLessThan(2));
            List<Gate> refusing = gates.stream().filter(gate -> gate.answered == Answer.REFUSED).toList();
            assertThat(refusing).as("gates that refused").hasSizeLessThanOrEqualTo(1);
            if (!refusing.isEmpty()) {
                long refusedAt = refusing.get(0).answeredAt;
                assertThat(gates).allSatisfy(gate -> assertThat(gate.askedAt).as("asked at").isLessThanOrEqualTo(
                        refusedAt));
                assertThat(request.routing()).isEqualTo(Routing.REFUSED);
                assertThat(request.refusal()).isSameAs(refusing.get(0).refusal);
            }

            // a naming that started while the refusing decision was under way (a hedge) waited for it and took the
            // refusal; and once a naming was answered with the refusal, none that started after it went through
            long refusalAsked = refusing.isEmpty() ? Long.MAX_VALUE : refusing.get(0).askedAt;
            long firstRefused = namings.stream().filter(naming -> naming.answer != null).mapToLong(Naming::end).min()
                    .orElse(Long.MAX_VALUE);
            assertThat(namings).allSatisfy(naming -> {
                if (naming.answer == null) {
                    assertThat(naming.start).as("a naming let through while or after the request was refused")
                            .isLessThan(Math.min(refusalAsked, firstRefused));
                }
                else {
                    assertThat(naming.answer).as("the one refusal").isSameAs(request.refusal());
                }
            });

            // admitted only by a gate that admitted it
            boolean anyAdmitted = gates.stream().anyMatch(gate -> gate.answered == Answer.ADMITTED);
            assertThat(request.admitted()).as("admitted").isEqualTo(anyAdmitted);
            assertThat(gates.stream().filter(gate -> gate.asked.get() > 0).count()).as("decisions, one per naming")
                    .isLessThanOrEqualTo(namings.size());
        }

        private record Naming(long start, long end, RefusalRenderer.Rendered answer, boolean failed) {
        }

        /** The limiter and the shedder behind one arming: a permit, then the ruling, a ticket when admitted. */
        private final class Gate implements MvcRequestLifecycle.RouteGate {

            final AtomicInteger asked = new AtomicInteger();
            final RefusalRenderer.Rendered refusal = MvcRequestLifecycleTest.rendered(429);
            private final Answer answer;
            volatile Answer answered;
            volatile long askedAt;
            volatile long answeredAt;

            Gate(Answer answer) {
                this.answer = answer;
            }

            @Override
            public Ruling decide(String routeId) {
                askedAt = clock.incrementAndGet();
                asked.incrementAndGet();
                if (answer != Answer.UNLIMITED) {
                    grant();
                }
                if (ThreadLocalRandom.current().nextBoolean()) {
                    Thread.yield();
                }
                if (answer == Answer.FAILS) {
                    throw new IllegalStateException("the gate failed");
                }
                if (answer == Answer.ADMITTED) {
                    hold();
                }
                answered = answer;
                answeredAt = clock.incrementAndGet();
                return switch (answer) {
                    case UNLIMITED -> Ruling.UNLIMITED;
                    case ADMITTED -> Ruling.ADMITTED;
                    default -> Ruling.refused(refusal);
                };
            }
        }

        /** A ticket that notes when it was released, and whether the request was over then. */
        private final class Ticket implements MvcRequestLifecycle.Held {

            final AtomicInteger releases = new AtomicInteger();
            volatile long releasedAt;

            @Override
            public void release(boolean overloaded, boolean sample) {
                releasedAt = clock.incrementAndGet();
                releases.incrementAndGet();
                if (request.progress() != Progress.OVER) {
                    violations.add("a ticket released while the request was " + request.progress());
                }
            }
        }

        private final class Owner implements RequestPermits.Owner {

            final AtomicInteger givenBack = new AtomicInteger();

            @Override
            public void giveBack(List<Check> permits) {
                givenBack.incrementAndGet();
                if (request.progress() != Progress.OVER) {
                    violations.add("a permit given back while the request was " + request.progress());
                }
            }
        }
    }
}
