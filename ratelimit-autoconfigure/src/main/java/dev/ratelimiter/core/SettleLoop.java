package dev.ratelimiter.core;

import java.time.Duration;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * Runs {@link LeaseStore#settle()} every interval: one store call per interval per instance, whatever the traffic.
 * A settle slower than the interval makes the loop skip ticks rather than queue them.
 */
public final class SettleLoop {

    private final LeaseStore leases;
    private final Duration interval;
    private Disposable loop;

    public SettleLoop(LeaseStore leases, Duration interval) {
        this.leases = leases;
        this.interval = interval;
    }

    /** Starts the loop; does nothing without a lease store (no local-mode store configured). */
    public synchronized void start() {
        if (loop == null && leases != null) {
            loop = Flux.interval(interval, interval, Background.scheduler())
                    .onBackpressureDrop()
                    .concatMap(tick -> leases.settle(), 1)
                    .subscribe();
        }
    }

    public synchronized void stop() {
        if (loop != null) {
            loop.dispose();
            loop = null;
        }
    }
}
