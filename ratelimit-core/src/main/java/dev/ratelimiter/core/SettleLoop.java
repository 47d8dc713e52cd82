package dev.ratelimiter.core;

import java.time.Duration;


/**
 * Runs {@link LeaseStore#settle()} every interval: one store call per interval per instance, whatever the traffic.
 * A settle slower than the interval makes the loop skip ticks rather than queue them.
 */
public final class SettleLoop {

    private final PeriodicTask loop;

    /** @param leases the lease store to settle, or null (no local-mode store configured: the loop does nothing) */
    public SettleLoop(LeaseStore leases, Duration interval) {
        this.loop = leases == null ? null : PeriodicTask.every("Settling local-mode leases", interval, leases::settle);
    }

    public void start() {
        if (loop != null) {
            loop.start();
        }
    }

    public void stop() {
        if (loop != null) {
            loop.stop();
        }
    }

    /** Whether leases are being settled: false when stopped, or when there are none to settle. */
    public boolean isRunning() {
        return loop != null && loop.isRunning();
    }
}
