package dev.ratelimiter.gateway;

import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Metering;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleCosts;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.TokenBucketLimit;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A rule's cost read from the request: values, clamps, the fallback for what is no cost, expressions refused. */
class CostExpressionsTest {

    private final CostExpressions costs = new CostExpressions();

    @Test
    void aHeaderAQueryParameterAndAHeaderLengthGiveTheCost() {
        assertThat(cost("headers['X-Batch-Size']", Map.of("X-Batch-Size", "7"), Map.of())).isEqualTo(7);
        assertThat(cost("query['n']", Map.of(), Map.of("n", "12"))).isEqualTo(12);
        assertThat(cost("headerLengths['X-Query'] / 10", Map.of("X-Query", "x".repeat(45)), Map.of())).isEqualTo(4);
        assertThat(cost("contentLength / 100", Map.of("Content-Length", "950"), Map.of())).isEqualTo(9);
        assertThat(cost("headers['X-Batch-Size'] ?: 3", Map.of(), Map.of())).isEqualTo(3);
    }

    /**
     * r35c: the README prices a request by its declared size, {@code contentLength / 1024}. A client that sends its body
     * chunked (HTTP/1.1 Transfer-Encoding, or HTTP/2 without Content-Length) declares no size: contentLength reads 0,
     * and a body of any size costs 1. A size that is not known is no number: the rule's fallback-cost (2 here), as the
     * documentation promises for "absent".
     */
    @Test
    void aBodyOfUnknownSizeCostsTheMostNotOne() {
        // r35c and r35s both found a chunked body priced as an empty one; it reads as infinite: max-cost
        assertThat(cost("contentLength / 100", Map.of("Transfer-Encoding", "chunked"), Map.of())).isEqualTo(50);
    }

    @Test
    void aCostIsClampedToOneAndMaxCost() {
        assertThat(cost("headers['X-Batch-Size']", Map.of("X-Batch-Size", "0"), Map.of())).isEqualTo(1);
        assertThat(cost("headers['X-Batch-Size']", Map.of("X-Batch-Size", "0.2"), Map.of())).isEqualTo(1);
        assertThat(cost("headers['X-Batch-Size']", Map.of("X-Batch-Size", "5000"), Map.of())).isEqualTo(50);
        assertThat(cost("headers['X-Batch-Size']", Map.of("X-Batch-Size", "1e300"), Map.of())).isEqualTo(50);
        assertThat(cost("headers['X-Batch-Size']", Map.of("X-Batch-Size", "Infinity"), Map.of())).isEqualTo(50);
    }

    @Test
    void whatIsNoCostCostsTheFallbackNeverZeroNorAnError() {
        assertThat(cost("headers['X-Batch-Size']", Map.of(), Map.of())).isEqualTo(2);
        assertThat(cost("headers['X-Batch-Size']", Map.of("X-Batch-Size", "many"), Map.of())).isEqualTo(2);
        assertThat(cost("headers['X-Batch-Size']", Map.of("X-Batch-Size", "-4"), Map.of())).isEqualTo(2);
        assertThat(cost("headers['X-Batch-Size']", Map.of("X-Batch-Size", "NaN"), Map.of())).isEqualTo(2);
        assertThat(cost("headers['X-Batch-Size']", Map.of("X-Batch-Size", "9".repeat(400)), Map.of())).isEqualTo(2);
        // a string divided by a number: SpEL throws on every request
        assertThat(cost("headers['X-Batch-Size'] / 2", Map.of("X-Batch-Size", "8"), Map.of())).isEqualTo(2);
        assertThat(cost("headers", Map.of(), Map.of())).isEqualTo(2);
    }

    @Test
    void aRuleWithoutAnExpressionKeepsItsStandardCost() {
        Rule fixed = new Rule("fixed", "fixed", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("t", 100, 10, java.time.Duration.ofSeconds(1)), 0, Mode.ENFORCE,
                FailureMode.LOCAL);
        assertThat(costs.of(request(Map.of(), Map.of())).costOf(fixed, 4)).isEqualTo(4);
        assertThat(costs.of(null)).isSameAs(RuleCosts.STANDARD);
    }

    @Test
    void expressionsReachingBeyondTheRequestAreRefusedNamingTheSetting() {
        assertThatThrownBy(() -> CostExpressions.validate("ratelimit.rules.a.cost-expression", "headers['x'"))
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("ratelimit.rules.a.cost-expression 'headers['x'' is not a valid expression");
        assertThatThrownBy(() -> CostExpressions.validate("ratelimit.rules.a.cost-expression",
                "T(java.lang.Runtime).getRuntime()")).isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("uses a type");
        assertThatThrownBy(() -> CostExpressions.validate("ratelimit.rules.a.cost-expression",
                "headers['X-N'].length()")).hasMessageContaining("a method call");
        assertThatThrownBy(() -> CostExpressions.validate("ratelimit.rules.a.cost-expression", "claims['n']"))
                .hasMessageContaining("reads the request only");
        assertThatThrownBy(() -> CostExpressions.validate("ratelimit.rules.a.cost-expression", " "))
                .hasMessageContaining("is empty");
    }

    private int cost(String expression, Map<String, String> headers, Map<String, String> query) {
        CostExpressions.validate("test", expression);
        Rule rule = new Rule("batch", "batch", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("t", 100, 10, java.time.Duration.ofSeconds(1)), 0, Mode.ENFORCE,
                FailureMode.LOCAL, StoreMode.EXACT, 1, null, Scope.REGIONAL, Metering.fromRequest(expression, 50, 2));
        return costs.of(request(headers, query)).costOf(rule, 1);
    }

    private static IdentityRequest request(Map<String, String> headers, Map<String, String> query) {
        HttpHeaders http = new HttpHeaders();
        headers.forEach(http::add);
        return new IdentityRequest() {
            @Override
            public HttpHeaders headers() {
                return http;
            }

            @Override
            public String cookie(String name) {
                return null;
            }

            @Override
            public String query(String name) {
                return query.get(name);
            }

            @Override
            public boolean repeatedQuery(String name) {
                return false;
            }

            @Override
            public String path() {
                return "/v1/batch";
            }

            @Override
            public String method() {
                return "POST";
            }

            @Override
            public String routeId() {
                return "api";
            }
        };
    }
}
