package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/** Small builders for core tests. */
final class Fixtures {

    private Fixtures() {
    }

    static Rule tokenBucket(String id, long capacity, long tokens, Duration period) {
        return rule(id, TokenBucketLimit.of(id + ".", capacity, tokens, period), Mode.ENFORCE);
    }

    static Rule slidingWindow(String id, long limit, Duration window) {
        return rule(id, SlidingWindowLimit.of(id + ".", limit, window), Mode.ENFORCE);
    }

    static Rule rule(String id, Limit limit, Mode mode) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY), limit, 0, mode, FailureMode.LOCAL);
    }

    static Check check(Rule rule, String client) {
        return new Check(rule, new BucketKey(ClientIds.unkeyed().of(client), rule.id()), 1, rule.mode() == Mode.SHADOW);
    }

    static RequestAttributes request(String apiKey, String tier, String routeClass) {
        return new RequestAttributes(apiKey, null, null, "10.0.0.1", "api", "/api/x", routeClass, tier, 1);
    }

    static Match matchTiers(String... tiers) {
        return new Match(Set.of(), List.of(), Set.of(), Set.of(tiers), Set.of());
    }
}
