package dev.ratelimiter.autoconfigure;

import java.time.Instant;
import java.util.List;

import dev.ratelimiter.autoconfigure.metrics.DecisionEventMeters;
import dev.ratelimiter.core.DecisionEvent;
import dev.ratelimiter.core.EventQueue;
import dev.ratelimiter.core.EventSink;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The decision events' meters read the queue and its sinks; "sent" only for sinks that count deliveries. */
class DecisionEventMetersTest {

    @Test
    void theMetersReadTheQueueAndTheSinksThatCountDeliveries() {
        EventQueue queue = new EventQueue(1, List.of(new CountingSink(7, 2), new CountingSink(-1, 3)));
        MeterRegistry registry = new SimpleMeterRegistry();
        DecisionEventMeters.bind(queue, registry);

        // Not started: the first event waits in the queue, the second finds it full.
        queue.offer(event());
        queue.offer(event());

        assertThat(registry.get("ratelimit.events").tag("result", "failed").functionCounter().count()).isEqualTo(5);
        assertThat(registry.get("ratelimit.events").tag("result", "sent").functionCounters()).singleElement()
                .satisfies(sent -> assertThat(sent.count()).isEqualTo(7));
        assertThat(registry.get("ratelimit.events").tag("result", "queued").functionCounter().count()).isEqualTo(1);
        assertThat(registry.get("ratelimit.events").tag("result", "dropped").functionCounter().count()).isEqualTo(1);
        assertThat(registry.get("ratelimit.events.backlog").gauge().value()).isEqualTo(1);
    }

    private static DecisionEvent event() {
        return new DecisionEvent(Instant.EPOCH, "client", "free", "api", "default", DecisionEvent.Verdict.SHED,
                "evaluated", "none", null, -1, -1, List.of(), "background", "reports", "gw-1", null);
    }

    /** A sink with fixed counts; {@code delivered} below 0 is a sink that does not count deliveries. */
    private record CountingSink(long delivered, long failed) implements EventSink {

        @Override
        public void accept(List<DecisionEvent> events) {
        }
    }
}
