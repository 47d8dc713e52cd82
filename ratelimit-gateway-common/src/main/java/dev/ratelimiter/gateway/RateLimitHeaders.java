package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.Verdict;
import org.springframework.http.HttpHeaders;

/**
 * Writes the rate-limit response fields, on allowed and denied responses alike, so that a well-behaved client can
 * pace itself and never see a 429. They describe the most restrictive enforced rule (see
 * {@link Verdict#limiting()}); {@code RateLimit-Policy} lists every enforced rule that applied. Shadow rules are
 * invisible to clients.
 * <ul>
 * <li>{@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset} (epoch seconds at which
 * the quota is whole again) — the de-facto fields most client libraries read;</li>
 * <li>{@code RateLimit-Policy} ({@code "id";q=quota;w=window seconds}, one item per rule) and {@code RateLimit}
 * ({@code "id";r=remaining;t=seconds until whole}) — the IETF httpapi draft's structured fields;</li>
 * <li>{@code Retry-After} on denials: whole seconds, rounded up, never less than 1.</li>
 * </ul>
 * A global rule split between regions is described as this region sees it: its quota is the region's share, and its
 * policy item says whose share with a {@code region} parameter ({@code "api";q=900;w=60;region="us-east-1"}).
 */
public final class RateLimitHeaders {

    public static final String LIMIT = "X-RateLimit-Limit";
    public static final String REMAINING = "X-RateLimit-Remaining";
    public static final String RESET = "X-RateLimit-Reset";
    public static final String POLICY = "RateLimit-Policy";
    public static final String RATE_LIMIT = "RateLimit";

    private RateLimitHeaders() {
    }

    /** Each rule's policy item, made once per rule: by id, checked against the rule object (rules are replaced). */
    private static final Map<String, Object[]> policyItems = new ConcurrentHashMap<>();

    public static void write(HttpHeaders headers, Verdict verdict, long nowEpochSeconds) {
        write(headers, verdict, nowEpochSeconds, null);
    }

    /** @param region this instance's region, named in the policy of global rules; null when not split by region */
    public static void write(HttpHeaders headers, Verdict verdict, long nowEpochSeconds, String region) {
        RuleOutcome limiting = verdict.limiting().orElse(null);
        if (limiting == null) {
            return;
        }
        long resetSeconds = ceilSeconds(limiting.resetAfter());
        headers.set(LIMIT, Long.toString(limiting.rule().limit().quota()));
        headers.set(REMAINING, Long.toString(limiting.remaining()));
        headers.set(RESET, Long.toString(nowEpochSeconds + resetSeconds));
        headers.set(POLICY, policy(verdict.enforced(), region));
        headers.set(RATE_LIMIT, "\"" + limiting.rule().id() + "\";r=" + limiting.remaining() + ";t=" + resetSeconds);
        if (!verdict.allowed()) {
            headers.set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds(limiting)));
        }
    }

    private static String policy(List<RuleOutcome> enforced, String region) {
        if (enforced.size() == 1) {
            return policyItem(enforced.get(0).rule(), region);
        }
        StringBuilder policy = new StringBuilder();
        for (RuleOutcome outcome : enforced) {
            if (!policy.isEmpty()) {
                policy.append(", ");
            }
            policy.append(policyItem(outcome.rule(), region));
        }
        return policy.toString();
    }

    private static String policyItem(Rule rule, String region) {
        if (region != null && rule.scope() == Scope.GLOBAL) {
            // Not cached: each bucket may hold a share of its own. The region name is a validated policy name.
            return describe(rule) + ";region=\"" + region + "\"";
        }
        Object[] cached = policyItems.get(rule.id());
        if (cached == null || cached[0] != rule) {
            cached = new Object[] { rule, describe(rule) };
            policyItems.put(rule.id(), cached);
        }
        return (String) cached[1];
    }

    private static String describe(Rule rule) {
        Limit limit = rule.limit();
        // A cap on requests in progress has no window to state; a quota per period does.
        if (limit.capsInProgress()) {
            return "\"" + rule.id() + "\";q=" + limit.quota();
        }
        return "\"" + rule.id() + "\";q=" + limit.quota() + ";w=" + Math.max(1, ceilSeconds(limit.window()));
    }

    /** Whole seconds a denied client should wait: rounded up, at least 1 (0 would invite an immediate retry). */
    public static long retryAfterSeconds(RuleOutcome outcome) {
        return Math.max(1, ceilSeconds(outcome.retryAfter()));
    }

    /** A duration in whole seconds, rounded up: a client that waits that long is never early. */
    public static long ceilSeconds(Duration duration) {
        long seconds = duration.getSeconds();
        return duration.getNano() > 0 ? seconds + 1 : seconds;
    }
}
