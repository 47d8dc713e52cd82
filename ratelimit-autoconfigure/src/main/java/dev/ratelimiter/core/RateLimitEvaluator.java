package dev.ratelimiter.core;

import java.util.Optional;

import reactor.core.publisher.Mono;

/**
 * Decides one request: resolves the client's tier and the limit for the route class, then spends tokens
 * from the client's bucket in the store. Knows nothing of HTTP; the gateway filter adapts it.
 */
public final class RateLimitEvaluator {

    private final LimitPlan plan;
    private final RateLimitStore store;

    public RateLimitEvaluator(LimitPlan plan, RateLimitStore store) {
        this.plan = plan;
        this.store = store;
    }

    /**
     * Checks one request.
     *
     * @param apiKey the API key as the client sent it (never stored; hashed into the bucket key)
     * @param routeClass the route class of the matched route
     * @param cost tokens this request costs, at least 1
     * @return the decision, or empty when no limit applies to this tier and route class
     */
    public Mono<Decision> check(String apiKey, String routeClass, int cost) {
        String tier = plan.tierOf(apiKey);
        Optional<TokenBucketLimit> found = plan.limitFor(tier, routeClass);
        if (found.isEmpty()) {
            return Mono.empty();
        }
        TokenBucketLimit limit = found.get();
        BucketKey key = new BucketKey(ClientIds.of(apiKey), limit.policy());
        if (cost > limit.capacity()) {
            // More than a full bucket can never be paid; saying so beats a retry-after that would lie.
            return Mono.just(new Decision(false, limit, 0, limit.timeToFill(), limit.timeToFill(),
                    Decision.Source.LOCAL));
        }
        return store.tryConsume(key, limit, Math.max(1, cost));
    }

    public LimitPlan plan() {
        return plan;
    }
}
