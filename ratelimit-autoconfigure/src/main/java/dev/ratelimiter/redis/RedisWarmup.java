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

/**
 * Runs one decision through Redis at start-up, on the main thread. It answers whether Redis is there (for the
 * start-up log line), and it opens the connection and loads the script before the first request, which would
 * otherwise pay for both and, under a 5 ms timeout, be decided locally.
 */
public final class RedisWarmup {

    private static final BucketKey WARMUP = new BucketKey("warmup", "startup");
    private static final Rule RULE = new Rule("startup", "startup", Match.ANY, List.of(Dimension.ROUTE),
            TokenBucketLimit.of("warmup.", 1, 1, Duration.ofMillis(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);

    private RedisWarmup() {
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
        try {
            store.evaluate(List.of(new Check(RULE, WARMUP, 1, false)))
                    .block(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            return true;
        }
        catch (RuntimeException unreachable) {
            return false;
        }
    }
}
