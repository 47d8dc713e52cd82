package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class LoadShedderTest {

    private double nextRandom = 0.5;
    private final AtomicLong clock = new AtomicLong();
    private final LoadShedder shedder = new LoadShedder("api", FixedLimit.of(100), 0.85, () -> nextRandom, clock::get);

    @Test
    void backgroundIsShedFirstThenNormalAndUserFacingOnlyAtTheLimit() {
        assertThat(shedder.shedProbability(Priority.BACKGROUND, 84, 100)).isZero();
        assertThat(shedder.shedProbability(Priority.BACKGROUND, 85, 100)).isZero();
        assertThat(shedder.shedProbability(Priority.BACKGROUND, 87, 100)).isCloseTo(0.4, within(1e-9));
        assertThat(shedder.shedProbability(Priority.BACKGROUND, 90, 100)).isEqualTo(1);
        assertThat(shedder.shedProbability(Priority.NORMAL, 90, 100)).isZero();
        assertThat(shedder.shedProbability(Priority.NORMAL, 93, 100)).isCloseTo(0.6, within(1e-9));
        assertThat(shedder.shedProbability(Priority.NORMAL, 95, 100)).isEqualTo(1);
        assertThat(shedder.shedProbability(Priority.CRITICAL, 99, 100)).isZero();
        assertThat(shedder.shedProbability(Priority.CRITICAL, 100, 100)).isEqualTo(1);
    }

    @Test
    void theShareShedRisesAndFallsGraduallyWithUtilisation() {
        double previous = 0;
        for (int inFlight = 80; inFlight <= 100; inFlight++) {
            double share = shedder.shedProbability(Priority.BACKGROUND, inFlight, 100);
            assertThat(share).isGreaterThanOrEqualTo(previous);
            assertThat(share - previous).as("no step larger than one request's worth of the band").isLessThanOrEqualTo(0.2 + 1e-9);
            previous = share;
        }
    }

    @Test
    void ticketsCountRequestsInProgressAndShedRequestsAreCountedByPriority() {
        List<LoadShedder.Ticket> tickets = new ArrayList<>();
        nextRandom = 0.99;
        for (int i = 0; i < 89; i++) {
            tickets.add(shedder.tryAcquire(Priority.NORMAL));
        }
        assertThat(shedder.inFlight()).isEqualTo(89);
        nextRandom = 0.5;
        assertThat(shedder.tryAcquire(Priority.BACKGROUND)).as("89%: background shed with probability 0.8").isNull();
        nextRandom = 0.9;
        assertThat(shedder.tryAcquire(Priority.BACKGROUND)).isNotNull();
        assertThat(shedder.shed(Priority.BACKGROUND)).isEqualTo(1);
        assertThat(shedder.shed(Priority.CRITICAL)).isZero();

        tickets.get(0).release(false, true);
        tickets.get(0).release(false, true);
        assertThat(shedder.inFlight()).as("a ticket released twice counts once").isEqualTo(89);
    }

    @Test
    void anAdaptiveLimitFallsWhenTheUpstreamSlowsDown() {
        Gradient2Limit limit = Gradient2Limit.newBuilder().initialLimit(50).minLimit(4).maxConcurrency(100).build();
        LoadShedder adaptive = new LoadShedder("reports", limit, 0.85, () -> 0.5, clock::get);
        for (int i = 0; i < 2_000; i++) {
            sample(adaptive, 10, 100);
        }
        int healthy = adaptive.limit();
        int lowest = healthy;
        for (int i = 0; i < 300; i++) {
            sample(adaptive, 70, 100);
            lowest = Math.min(lowest, adaptive.limit());
        }
        // Gradient2 reads a sudden rise in latency as queueing and cuts the limit at once; under a lasting shift its
        // long-term baseline catches up and the limit recovers (the ceiling, max-in-flight, still holds).
        assertThat(lowest).as("7x latency with the same work in progress").isLessThan(healthy * 2 / 3);
    }

    private void sample(LoadShedder adaptive, long rttMillis, int inFlight) {
        List<LoadShedder.Ticket> open = new ArrayList<>();
        for (int i = 0; i < Math.min(inFlight, adaptive.limit()); i++) {
            open.add(adaptive.tryAcquire(Priority.CRITICAL));
        }
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(rttMillis));
        open.forEach(ticket -> ticket.release(false, true));
    }
}
