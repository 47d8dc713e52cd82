package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Metering;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.TokenBucketLimit;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hostile client pricing its own request down: the operator priced it by the body's size ({@code contentLength},
 * which the threat model names as the safe choice) or by a header's length ({@code headerLengths}), and the client
 * sends the same work in a shape those read as small.
 */
class CostExpressionEvasionTest {

    private final CostExpressions costs = new CostExpressions();

    /**
     * A body sent chunked (HTTP/1.1 {@code Transfer-Encoding: chunked}) has no {@code Content-Length}: read as 0, a
     * 10 MB upload priced at {@code contentLength / 1024} costs the minimum 1 instead of max-cost.
     */
    @Test
    void aChunkedBodyOfUnknownSizeIsNotPricedAsAnEmptyOne() {
        int declared = cost("contentLength / 1024", headers("Content-Length", "10485760"));
        assertThat(declared).as("10 MiB declared").isEqualTo(50);
        int chunked = cost("contentLength / 1024", headers("Transfer-Encoding", "chunked"));
        assertThat(chunked).as("the same body sent chunked: its size is unknown, not 0").isEqualTo(50);
    }

    /**
     * A header priced by its length and sent twice: {@code headerLengths} read only the first value, so a client
     * splitting a 450-character query over a 5-character first copy and a second one paid for 5 (an upstream joining
     * repeated headers, as servlet containers and most frameworks do, still gets all of it).
     */
    @Test
    void aHeaderSplitInTwoIsPricedByAllOfItsLength() {
        HttpHeaders once = headers("X-Query", "x".repeat(455));
        assertThat(cost("headerLengths['X-Query'] / 10", once)).isEqualTo(45);
        HttpHeaders split = headers("X-Query", "x".repeat(5));
        split.add("X-Query", "x".repeat(450));
        assertThat(cost("headerLengths['X-Query'] / 10", split)).as("the same characters in two copies")
                .isGreaterThanOrEqualTo(45);
    }

    /**
     * A header or query parameter the expression prices by, sent twice: read as absent, the request cost
     * {@code fallback-cost} (2) while an upstream reading either copy did a batch of 1,000. Identity expressions refuse
     * such a request as ambiguous; a cost takes the most it could be.
     */
    @Test
    void aPriceSentTwiceIsNotTheFallback() {
        HttpHeaders twice = headers("X-Batch-Size", "1000");
        twice.add("X-Batch-Size", "1000");
        assertThat(cost("headers['X-Batch-Size']", twice)).as("a header sent twice").isEqualTo(50);
        assertThat(costs.of(request(new HttpHeaders(), "n")).costOf(rule("query['n']"), 1))
                .as("a query parameter sent twice").isEqualTo(50);
    }

    private static HttpHeaders headers(String name, String value) {
        HttpHeaders http = new HttpHeaders();
        http.add(name, value);
        return http;
    }

    private int cost(String expression, HttpHeaders headers) {
        return costs.of(request(headers)).costOf(rule(expression), 1);
    }

    private static Rule rule(String expression) {
        CostExpressions.validate("test", expression);
        return new Rule("upload", "upload", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("t", 100, 10, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 1, null, Scope.REGIONAL, Metering.fromRequest(expression, 50, 2));
    }

    private static IdentityRequest request(HttpHeaders http) {
        return request(http, null);
    }

    /** {@code repeated}: a query parameter sent twice (each copy "1000"), or null. */
    private static IdentityRequest request(HttpHeaders http, String repeated) {
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
                return name.equals(repeated) ? "1000" : null;
            }

            @Override
            public boolean repeatedQuery(String name) {
                return name.equals(repeated);
            }

            @Override
            public String path() {
                return "/v1/upload";
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
