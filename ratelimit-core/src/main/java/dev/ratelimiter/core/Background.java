package dev.ratelimiter.core;

import java.util.concurrent.ScheduledThreadPoolExecutor;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The timer of the limiter's background loops (settles, permit renewals, heartbeats, rule polls) and of their
 * timeouts. Not Reactor's parallel scheduler: its executors remove a cancelled timer from their queue under a lock,
 * and a timeout is cancelled by whichever thread delivers the answer — a Lettuce I/O thread, which must not wait on a
 * lock. Here a cancelled timer is only marked, and one daemon thread runs them all.
 */
public final class Background {

    private static final Scheduler scheduler;

    static {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "ratelimit-background");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(false);
        scheduler = Schedulers.fromExecutorService(executor, "ratelimit-background");
    }

    private Background() {
    }

    public static Scheduler scheduler() {
        return scheduler;
    }
}
