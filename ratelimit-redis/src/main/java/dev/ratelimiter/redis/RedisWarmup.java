package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.TokenBucketLimit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warms the limiter's paths to Redis at start-up, on the main thread, before the web server takes its first request:
 * the connection open, a connection to every primary of a cluster open, every script loaded on each, and one decision
 * run through Redis. It answers whether Redis is there (for the start-up log line); a first request would otherwise pay
 * for each of these.
 */
public final class RedisWarmup {

    private static final Logger logger = LoggerFactory.getLogger(RedisWarmup.class);

    private static final BucketKey WARMUP = new BucketKey("warmup", "startup");
    private static final Rule RULE = new Rule("startup", "startup", Match.ANY, List.of(Dimension.ROUTE),
            TokenBucketLimit.of("warmup.", 1, 1, Duration.ofMillis(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);

    private RedisWarmup() {
    }

    /**
     * {@link #succeeds}, and when Redis did not answer, one warning saying how the limiter decides until it does.
     *
     * @param memoryUntilAnswers whether limits are kept in memory until Redis first answers ({@code store.type: auto})
     * rather than decided by each rule's failure mode
     */
    public static boolean atStartup(RedisRateLimitStore store, LimiterConnection connection, Duration timeout,
            boolean memoryUntilAnswers) {
        boolean answered = succeeds(store, connection, timeout);
        if (!answered && memoryUntilAnswers) {
            logger.warn("Redis is not reachable ({}); rate limits and runtime rules are kept in this instance's "
                    + "memory until it answers (it is tried again in the background).", connection.description());
        }
        else if (!answered) {
            logger.warn("Redis is not reachable ({}) at start-up; deciding by each rule's failure mode until it "
                    + "answers.", connection.description());
        }
        return answered;
    }

    /** Whether the connection opened and one decision went through Redis within {@code timeout}. */
    public static boolean succeeds(RedisRateLimitStore store, LimiterConnection connection, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!connection.connected() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        if (!connection.connected()) {
            return false;
        }
        connection.warmPrimaries(deadline);
        // Sent again while the deadline allows: a first call slower than the store timeout (a cold JVM, a busy
        // machine) does not make Redis unreachable.
        while (System.nanoTime() - deadline < 0) {
            try {
                store.evaluate(List.of(new Check(RULE, WARMUP, 1, false)))
                        .block(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
                return true;
            }
            catch (RuntimeException unanswered) {
                if (!connection.connected()) {
                    return false;
                }
                try {
                    Thread.sleep(20);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return false;
    }
}
