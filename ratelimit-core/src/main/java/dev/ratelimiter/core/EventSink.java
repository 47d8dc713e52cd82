package dev.ratelimiter.core;

import java.util.List;

/**
 * Where decision events go: Kafka, a log, memory. Called from the event queue's own thread, never from a request;
 * it may take its time, but every event it cannot take must be counted by the sink as failed, never retried at the
 * expense of newer events.
 */
public interface EventSink {

    /** Takes a batch of events, oldest first. Must not throw. */
    void accept(List<DecisionEvent> events);

    /** Events the sink delivered and had acknowledged since start, or -1 when it does not count them. */
    default long delivered() {
        return -1;
    }

    /** Events the sink could not deliver since start. */
    default long failed() {
        return 0;
    }

    /** Releases resources; pending events may be flushed within a short bound or dropped. */
    default void close() {
    }
}
