package dev.ratelimiter.gateway;

import java.time.Duration;

import dev.ratelimiter.core.Decision;
import dev.ratelimiter.core.TokenBucketLimit;
import org.springframework.http.HttpHeaders;

/**
 * Writes the rate-limit response fields, on allowed and denied responses alike, so that a well-behaved
 * client can pace itself and never see a 429:
 * <ul>
 * <li>{@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset} (epoch seconds at
 * which the bucket is full again) — the de-facto fields most client libraries read;</li>
 * <li>{@code RateLimit-Policy} ({@code "name";q=capacity;w=seconds to fill}) and {@code RateLimit}
 * ({@code "name";r=remaining;t=seconds until full}) — the IETF httpapi draft's structured fields;</li>
 * <li>{@code Retry-After} on denials: whole seconds, rounded up, never less than 1.</li>
 * </ul>
 */
public final class RateLimitHeaders {

    public static final String LIMIT = "X-RateLimit-Limit";
    public static final String REMAINING = "X-RateLimit-Remaining";
    public static final String RESET = "X-RateLimit-Reset";
    public static final String POLICY = "RateLimit-Policy";
    public static final String RATE_LIMIT = "RateLimit";

    private RateLimitHeaders() {
    }

    public static void write(HttpHeaders headers, Decision decision, long nowEpochSeconds) {
        TokenBucketLimit limit = decision.limit();
        long resetSeconds = ceilSeconds(decision.resetAfter());
        headers.set(LIMIT, String.valueOf(limit.capacity()));
        headers.set(REMAINING, String.valueOf(decision.remaining()));
        headers.set(RESET, String.valueOf(nowEpochSeconds + resetSeconds));
        headers.set(POLICY, "\"" + limit.policy() + "\";q=" + limit.capacity() + ";w="
                + Math.max(1, ceilSeconds(limit.timeToFill())));
        headers.set(RATE_LIMIT, "\"" + limit.policy() + "\";r=" + decision.remaining() + ";t=" + resetSeconds);
        if (!decision.allowed()) {
            headers.set(HttpHeaders.RETRY_AFTER, String.valueOf(retryAfterSeconds(decision)));
        }
    }

    /** Whole seconds a denied client should wait: rounded up, at least 1 (0 would invite an immediate retry). */
    public static long retryAfterSeconds(Decision decision) {
        return Math.max(1, ceilSeconds(decision.retryAfter()));
    }

    static long ceilSeconds(Duration duration) {
        long seconds = duration.getSeconds();
        return duration.getNano() > 0 ? seconds + 1 : seconds;
    }
}
