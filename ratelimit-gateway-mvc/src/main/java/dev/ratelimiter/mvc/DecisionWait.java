package dev.ratelimiter.mvc;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.ratelimiter.core.Verdict;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Waits on a servlet thread (a platform or a virtual one) for a decision, never longer than a bound. The decision
 * already carries the store timeout and breaker (the fail-safe store answers from its fallback once the timeout has
 * passed); the bound is the backstop above it, for a decision that is late for any other reason. Past it, or on any
 * failure, the request goes through: a limiter that is stuck must not become an outage of the API behind it, nor a
 * 500.
 */
final class DecisionWait {

    private static final Logger logger = LoggerFactory.getLogger(DecisionWait.class);

    private final long boundNanos;

    /** @param bound the longest a request waits for its decision: the store timeout and a margin */
    DecisionWait(Duration bound) {
        this.boundNanos = bound.toNanos();
    }

    Verdict await(Mono<Verdict> decision) {
        CompletableFuture<Verdict> future = decision.toFuture();
        try {
            Verdict verdict = future.get(boundNanos, TimeUnit.NANOSECONDS);
            return verdict != null ? verdict : Verdict.unlimited(Verdict.Reason.NO_RULE);
        }
        catch (TimeoutException ex) {
            // Cancelling unsubscribes: a permit granted after this is given back by the request's permits.
            future.cancel(true);
            logger.warn("No rate-limit decision within {} ms; letting the request through",
                    TimeUnit.NANOSECONDS.toMillis(boundNanos));
        }
        catch (InterruptedException ex) {
            future.cancel(true);
            Thread.currentThread().interrupt();
        }
        catch (ExecutionException ex) {
            logger.error("Rate-limit decision failed; letting the request through", ex.getCause());
        }
        return Verdict.unlimited(Verdict.Reason.NO_RULE);
    }
}
