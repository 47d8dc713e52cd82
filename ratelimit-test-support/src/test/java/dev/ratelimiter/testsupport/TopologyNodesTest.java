package dev.ratelimiter.testsupport;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TopologyNodesTest {

    @Test
    void aStartThatLosesItsPortIsTriedAgain() {
        AtomicInteger attempts = new AtomicInteger();
        String started = TopologyNodes.start(() -> {
            if (attempts.incrementAndGet() < 3) {
                throw new IllegalStateException("port taken");
            }
            return "node on attempt " + attempts.get();
        });
        assertThat(started).isEqualTo("node on attempt 3");
    }

    @Test
    void afterThreeFailedStartsTheLastFailureIsThrown() {
        AtomicInteger attempts = new AtomicInteger();
        assertThatThrownBy(() -> TopologyNodes.start(() -> {
            throw new IllegalStateException("failure " + attempts.incrementAndGet());
        })).isInstanceOf(IllegalStateException.class).hasMessage("failure 3");
        assertThat(attempts).hasValue(3);
    }
}
