package dev.ratelimiter.autoconfigure.metrics;

import dev.ratelimiter.core.EventQueue;
import dev.ratelimiter.core.EventSink;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import static io.micrometer.core.instrument.binder.BaseUnits.EVENTS;

/**
 * The meters of decision events: {@code ratelimit.events} by result (queued, dropped, failed, and sent for each sink
 * that counts deliveries) and the queue's backlog.
 */
public final class DecisionEventMeters {

    private DecisionEventMeters() {
    }

    public static void bind(EventQueue queue, MeterRegistry registry) {
        FunctionCounter.builder("ratelimit.events", queue, EventQueue::queued).tag("result", "queued")
                .description("Decision events queued for the sinks").baseUnit(EVENTS).register(registry);
        FunctionCounter.builder("ratelimit.events", queue, EventQueue::dropped).tag("result", "dropped")
                .description("Decision events dropped because the queue was full").baseUnit(EVENTS).register(registry);
        FunctionCounter.builder("ratelimit.events", queue,
                q -> q.sinks().stream().mapToLong(EventSink::failed).sum()).tag("result", "failed")
                .description("Decision events a sink could not deliver (Kafka down or slow)").baseUnit(EVENTS)
                .register(registry);
        Gauge.builder("ratelimit.events.backlog", queue, EventQueue::backlog)
                .description("Decision events waiting in the queue").baseUnit(EVENTS).register(registry);
        queue.sinks().stream().filter(sink -> sink.delivered() >= 0)
                .forEach(sink -> FunctionCounter.builder("ratelimit.events", sink, EventSink::delivered)
                        .tag("result", "sent").description("Decision events Kafka acknowledged").baseUnit(EVENTS)
                        .register(registry));
    }
}
