package dev.ratelimiter.core;

import java.time.Duration;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A run of the limiter's background work every period (settles, permit renewals, heartbeats, rule polls), on the
 * {@link Background} timer. One run at a time: a run slower than the period skips the ticks it overlaps rather than
 * queueing them, and a run that fails is logged and the next tick runs again — the loop never ends on an error.
 * Starting a started task or stopping a stopped one does nothing; a stopped task can be started again.
 */
public final class PeriodicTask {

    private static final Logger logger = LoggerFactory.getLogger(PeriodicTask.class);

    private final String name;
    private final Duration firstRun;
    private final Duration period;
    private final Supplier<? extends Mono<?>> run;
    private Disposable loop;

    /**
     * @param name what the task does, for the log
     * @param firstRun delay before the first run ({@code Duration.ZERO}: at once)
     * @param period time between runs
     * @param run one run; deferred, so that it is assembled anew at every tick
     */
    public PeriodicTask(String name, Duration firstRun, Duration period, Supplier<? extends Mono<?>> run) {
        if (period.isZero() || period.isNegative()) {
            throw new IllegalArgumentException(name + ": the period must be positive, got " + period);
        }
        this.name = name;
        this.firstRun = firstRun;
        this.period = period;
        this.run = run;
    }

    /** A task whose first run is one period after its start. */
    public static PeriodicTask every(String name, Duration period, Supplier<? extends Mono<?>> run) {
        return new PeriodicTask(name, period, period, run);
    }

    public synchronized void start() {
        if (loop == null) {
            loop = Flux.interval(firstRun, period, Background.scheduler())
                    .onBackpressureDrop()
                    // prefetch 1: one tick may wait while a run is in progress; later ones are dropped above
                    .concatMap(tick -> Mono.defer(run).onErrorResume(this::failed), 1)
                    .subscribe();
        }
    }

    public synchronized void stop() {
        if (loop != null) {
            loop.dispose();
            loop = null;
        }
    }

    public synchronized boolean isRunning() {
        return loop != null;
    }

    private Mono<Object> failed(Throwable failure) {
        logger.warn("{} failed; it runs again in {}: {}", name, period, failure.toString());
        return Mono.empty();
    }
}
