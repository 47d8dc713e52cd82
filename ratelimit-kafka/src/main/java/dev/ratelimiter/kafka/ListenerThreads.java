package dev.ratelimiter.kafka;

import java.time.Duration;

import org.apache.kafka.clients.consumer.Consumer;

/** What the topic listeners (region shares, abuse scores) share: a reading thread stopped the same way. */
final class ListenerThreads {

    private ListenerThreads() {
    }

    /**
     * Stops a listener's thread and closes its consumer (null: none made yet): the consumer is woken out of a poll and
     * the thread interrupted out of a back-off, then waited for a bounded time, so that closing an application never
     * hangs on a broker that does not answer.
     */
    static void stop(Thread thread, Consumer<?, ?> consumer) {
        if (consumer != null) {
            consumer.wakeup();
        }
        thread.interrupt();
        try {
            thread.join(5_000);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        if (consumer != null) {
            consumer.close(Duration.ofSeconds(2));
        }
    }
}
