package dev.ratelimiter.mvc;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.gateway.ThrottledLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Waits on a servlet thread (a platform or a virtual one) for a decision, never longer than a bound. The decision
 * already carries the store timeout and breaker (the fail-safe store answers from its fallback once the timeout has
 * passed); the bound is the backstop above it, for a decision that is late for any other reason. Past it, or on any
 * failure, the request is decided by its rules' failure modes without the store (the {@code undecided} verdict):
 * a fail-closed rule still refuses with 503, every other request goes through — a limiter that is stuck must not
 * become an outage of the API behind it, nor a 500, nor a way around a rule that promised to fail closed.
 */
final class DecisionWait {

    private static final Logger logger = LoggerFactory.getLogger(DecisionWait.class);

    private final long boundNanos;
    /** A stuck limiter is said at WARN at most once a minute; every case in between goes to DEBUG. */
    private final ThrottledLog stuck;

    /** @param bound the longest a request waits for its decision: the store timeout and a margin */
    DecisionWait(Duration bound) {
        this(bound, System::nanoTime);
    }

    DecisionWait(Duration bound, LongSupplier nanoTime) {
        this.boundNanos = bound.toNanos();
        this.stuck = new ThrottledLog(logger, nanoTime);
    }

    /**
     * @param undecided the verdict when the decision does not come: the rules' failure modes without the store
     */
    Verdict await(Mono<Verdict> decision, Supplier<Verdict> undecided) {
        CompletableFuture<Verdict> future = decision.toFuture();
        try {
            Verdict verdict = future.get(boundNanos, TimeUnit.NANOSECONDS);
            return verdict != null ? verdict : Verdict.unlimited(Verdict.Reason.NO_RULE);
        }
        catch (TimeoutException ex) {
            // Cancelling unsubscribes: a permit granted after this is given back by the request's permits.
            future.cancel(true);
            stuck.warn("No rate-limit decision within {} ms; deciding the request by its rules' failure modes",
                    TimeUnit.NANOSECONDS.toMillis(boundNanos));
        }
        catch (InterruptedException ex) {
            future.cancel(true);
            Thread.currentThread().interrupt();
        }
        catch (ExecutionException ex) {
            stuck.warn("Rate-limit decision failed; deciding the request by its rules' failure modes", ex.getCause());
        }
        return undecided.get();
    }
}
