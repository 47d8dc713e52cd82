package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/** What a client of a global rule sees: its region's share, and the region named in the policy. */
class RateLimitHeadersRegionTest {

    static final BucketKey BUCKET = new BucketKey("AAAAAAAAAAAAAAAAAAAAAA", "api@t");

    @Test
    void aGlobalRuleIsDescribedAsThisRegionsShareAndSaysWhose() {
        Rule global = rule("api", Scope.GLOBAL);
        RegionShares shares = new RegionShares("us-east-1", java.util.Map.of("us-east-1", 1.0, "eu-central-1", 1.0,
                "ap-southeast-1", 1.0));
        shares.apply(RegionShares.shareKey(BUCKET), 1_000, java.util.Map.of("us-east-1", 900L));
        Rule share = shares.ruleFor(global, BUCKET);
        Rule regional = rule("burst", Scope.REGIONAL);
        HttpHeaders headers = new HttpHeaders();
        RateLimitHeaders.write(headers, verdict(share, regional), 0, "us-east-1");
        assertThat(headers.getFirst(RateLimitHeaders.POLICY))
                .isEqualTo("\"api\";q=900;w=60;region=\"us-east-1\", \"burst\";q=1000;w=60");
        HttpHeaders alone = new HttpHeaders();
        RateLimitHeaders.write(alone, verdict(share), 0, "us-east-1");
        assertThat(alone.getFirst(RateLimitHeaders.LIMIT)).as("the region's share").isEqualTo("900");
    }

    @Test
    void withoutRegionsTheHeadersAreAsBefore() {
        HttpHeaders headers = new HttpHeaders();
        RateLimitHeaders.write(headers, verdict(rule("api", Scope.GLOBAL)), 0);
        assertThat(headers.getFirst(RateLimitHeaders.POLICY)).isEqualTo("\"api\";q=1000;w=60");
    }

    private static Verdict verdict(Rule... rules) {
        return Verdict.evaluated(java.util.Arrays.stream(rules).map(rule -> new RuleOutcome(new Check(rule, BUCKET, 1,
                false), true, 10, Duration.ZERO, Duration.ofSeconds(1))).toList(), Verdict.Source.STORE);
    }

    private static Rule rule(String id, Scope scope) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY), TokenBucketLimit.of("t.", 1_000, 1_000,
                Duration.ofMinutes(1)), 0, Mode.ENFORCE, FailureMode.LOCAL, StoreMode.EXACT, 1, null, scope);
    }
}
