package dev.ratelimiter.gateway.webflux;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.gateway.RateLimitHeaders;
import dev.ratelimiter.gateway.Refusal;
import dev.ratelimiter.gateway.RefusalContext;
import dev.ratelimiter.gateway.RefusalRenderer;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static dev.ratelimiter.gateway.RefusalCatalogue.BUCKET;
import static dev.ratelimiter.gateway.RefusalCatalogue.allowed;
import static dev.ratelimiter.gateway.RefusalCatalogue.denied;
import static dev.ratelimiter.gateway.RefusalCatalogue.rate;
import static dev.ratelimiter.gateway.RefusalCatalogue.rule;
import static org.assertj.core.api.Assertions.entry;

/** The limiter's answers as a client parses them, by default and through customizers. */
class RefusalWriterTest {

    static final JsonMapper json = JsonMapper.builder().build();

    @Test
    void aRateLimited429IsTheQuotaExceededProblemNamingEveryExceededPolicy() {
        Verdict verdict = Verdict.evaluated(List.of(denied(rule("hourly", rate()), 30),
                allowed(rule("daily", rate())), denied(rule("burst", rate()), 90)), Verdict.Source.STORE);
        MockServerWebExchange exchange = exchange();

        RefusalWriter.defaults().rateLimited(exchange, verdict).block(Duration.ofSeconds(5));

        Map<String, Object> body = body(exchange);
        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
        assertThat(exchange.getResponse().getHeaders().getContentType()).hasToString("application/problem+json");
        assertThat(body).containsExactly(entry("type", "https://iana.org/assignments/http-problem-types#quota-exceeded"),
                entry("title", "Too Many Requests"), entry("status", 429),
                entry("detail", "Rate limit 'burst' exceeded; retry after 90 seconds."), entry("error", "rate_limited"),
                entry("retryAfter", 90), entry("policy", "burst"), entry("violated-policies", List.of("burst",
                        "hourly")));
    }

    @Test
    void aConcurrency429IsQuotaExceededTooWithItsOwnErrorCode() {
        Rule slots = rule("exports", ConcurrencyLimit.of("c.", 2, Duration.ofSeconds(30)));
        Verdict verdict = Verdict.evaluated(List.of(new RuleOutcome(new Check(slots, BUCKET, 1, false,
                new RequestPermits()), false, 0, Duration.ofSeconds(1), Duration.ofSeconds(1))), Verdict.Source.STORE);
        MockServerWebExchange exchange = exchange();

        RefusalWriter.defaults().rateLimited(exchange, verdict).block(Duration.ofSeconds(5));

        Map<String, Object> body = body(exchange);
        assertThat(body).containsEntry("type", RefusalRenderer.QUOTA_EXCEEDED)
                .containsEntry("error", "too_many_in_progress").containsEntry("violated-policies", List.of("exports"))
                .containsEntry("detail", "Concurrency limit 'exports' reached: 2 request(s) already in progress; "
                        + "retry after 1 second.");
    }

    @Test
    void the503sStayAboutBlankWithoutViolatedPolicies() {
        MockServerWebExchange unavailable = exchange();
        RefusalWriter.defaults().unavailable(unavailable, Verdict.unavailable(List.of(denied(rule("login",
                rate()), 2)))).block(Duration.ofSeconds(5));
        MockServerWebExchange shed = exchange();
        RefusalWriter.defaults().overloaded(shed, null, "reports", "background", 4).block(Duration.ofSeconds(5));

        assertThat(body(unavailable)).containsEntry("type", "about:blank").containsEntry("status", 503)
                .containsEntry("error", "limiter_unavailable").containsEntry("retryAfter", 2)
                .containsEntry("policy", "login").doesNotContainKey("violated-policies");
        assertThat(unavailable.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("2");
        assertThat(body(shed)).containsEntry("type", "about:blank").containsEntry("error", "overloaded")
                .containsEntry("priority", "background").containsEntry("upstream", "reports");
        assertThat(shed.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("4");
    }

    @Test
    void aCustomizerChangesStatusHeadersAndBodyAndSeesWhatWasRefused() {
        List<RefusalContext> seen = new ArrayList<>();
        RefusalWriter writer = new RefusalWriter(List.of((refusal, context) -> {
            seen.add(context);
            refusal.setStatus(HttpStatus.SERVICE_UNAVAILABLE);
            refusal.getHeaders().set("X-Plan", context.request().tier());
            refusal.getHeaders().remove(RateLimitHeaders.LIMIT);
            refusal.getProblemDetail().setProperty("support", "https://example.com/limits");
        }, (refusal, context) -> refusal.getProblemDetail().setProperty("seenStatus",
                refusal.getStatus().value())));
        MockServerWebExchange exchange = exchange();
        RequestAttributes request = new RequestAttributes("key-1", null, null, null, "api", "/api", "default", "free",
                1);
        exchange.getAttributes().put(RateLimitFilter.REQUEST_ATTRIBUTE, request);
        exchange.getResponse().getHeaders().set(RateLimitHeaders.LIMIT, "5");
        exchange.getResponse().getHeaders().set("Retry-After", "30");

        writer.rateLimited(exchange, Verdict.evaluated(List.of(denied(rule("hourly", rate()), 30)),
                Verdict.Source.STORE)).block(Duration.ofSeconds(5));

        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(exchange.getResponse().getHeaders().getFirst("X-Plan")).isEqualTo("free");
        assertThat(exchange.getResponse().getHeaders().containsHeader(RateLimitHeaders.LIMIT)).isFalse();
        assertThat(exchange.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("30");
        Map<String, Object> body = body(exchange);
        assertThat(body).as("the status member follows the status").containsEntry("status", 503)
                .containsEntry("support", "https://example.com/limits").containsEntry("seenStatus", 503)
                .containsEntry("error", "rate_limited");
        assertThat(seen).singleElement().satisfies(context -> {
            assertThat(context.kind()).isEqualTo(Refusal.Kind.RATE_LIMITED);
            assertThat(context.ruleIds()).containsExactly("hourly");
            assertThat(context.retryAfterSeconds()).isEqualTo(30);
            assertThat(context.request()).isSameAs(request);
            assertThat(context.nativeExchange(ServerWebExchange.class)).isSameAs(exchange);
        });
    }

    @Test
    void aCustomizerChangesTheTypedProblemAndItIsWrittenInTheBodysOrder() {
        RefusalWriter writer = new RefusalWriter(List.of((refusal, context) -> {
            ProblemDetail problem = refusal.getProblemDetail();
            String requestId = context.nativeExchange(ServerWebExchange.class).getRequest().getHeaders()
                    .getFirst("X-Request-Id");
            problem.setInstance(URI.create("urn:request:" + requestId));
            problem.setProperty("support", "https://example.com/limits");
        }));
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/hello")
                .header("X-Request-Id", "r-42"));

        writer.rateLimited(exchange, Verdict.evaluated(List.of(denied(rule("hourly", rate()), 30)),
                Verdict.Source.STORE)).block(Duration.ofSeconds(5));

        String text = exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5));
        assertThat(text).isEqualTo("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
                + "\"title\":\"Too Many Requests\",\"status\":429,"
                + "\"detail\":\"Rate limit 'hourly' exceeded; retry after 30 seconds.\",\"instance\":\"urn:request:r-42\","
                + "\"error\":\"rate_limited\",\"retryAfter\":30,\"policy\":\"hourly\",\"violated-policies\":[\"hourly\"],"
                + "\"support\":\"https://example.com/limits\"}");
        assertThat(exchange.getResponse().getHeaders().getContentLength()).isEqualTo(text.length());
        assertThat(exchange.getResponse().getHeaders().getContentType()).hasToString("application/problem+json");
    }

    @Test
    void aFailingCustomizerLeavesTheDefaultRefusalUntouchedByItsPartialChanges() {
        RefusalWriter writer = new RefusalWriter(List.of((refusal, context) -> {
            refusal.getHeaders().set("X-Half", "done");
            refusal.setStatus(HttpStatus.OK);
            throw new IllegalStateException("customizer bug");
        }));
        RefusalWriter downgrading = new RefusalWriter(List.of((refusal, context) -> refusal.setStatus(HttpStatus.OK)));
        MockServerWebExchange failing = exchange();
        MockServerWebExchange downgraded = exchange();
        MockServerWebExchange plain = exchange();
        Verdict verdict = Verdict.evaluated(List.of(denied(rule("hourly", rate()), 30)), Verdict.Source.STORE);

        writer.rateLimited(failing, verdict).block(Duration.ofSeconds(5));
        downgrading.rateLimited(downgraded, verdict).block(Duration.ofSeconds(5));
        RefusalWriter.defaults().rateLimited(plain, verdict).block(Duration.ofSeconds(5));

        for (MockServerWebExchange exchange : List.of(failing, downgraded)) {
            assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
            assertThat(exchange.getResponse().getHeaders().containsHeader("X-Half")).isFalse();
            assertThat(exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5)))
                    .isEqualTo(plain.getResponse().getBodyAsString().block(Duration.ofSeconds(5)));
        }
    }

    @Test
    void customizedValuesAreWrittenAsJsonAndContentLengthCountsTheirBytes() {
        RefusalWriter writer = new RefusalWriter(List.of((refusal, context) -> {
            refusal.getProblemDetail().setProperty("nested", Map.of("quote", "say \"hi\"\n"));
            refusal.getProblemDetail().setProperty("ratio", Double.NaN);
            refusal.getProblemDetail().setProperty("flags", new Object[] { true, null, 1.5 });
            refusal.getProblemDetail().setProperty("note", "größer");
        }));
        MockServerWebExchange exchange = exchange();

        writer.missingApiKey(exchange, HttpStatus.UNAUTHORIZED, "the X-API-Key header", "ApiKey header=\"X-API-Key\"").block(Duration.ofSeconds(5));

        String text = exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5));
        assertThat(exchange.getResponse().getHeaders().getContentLength())
                .isEqualTo(text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
        Map<String, Object> body = body(exchange);
        assertThat(body).containsEntry("error", "missing_api_key").containsEntry("status", 401)
                .containsEntry("nested", Map.of("quote", "say \"hi\"\n")).containsEntry("note", "größer")
                .containsEntry("flags", java.util.Arrays.asList(true, null, 1.5));
        assertThat(body.get("ratio")).isNull();
        assertThat(exchange.getResponse().getHeaders().getFirst("WWW-Authenticate"))
                .isEqualTo("ApiKey header=\"X-API-Key\"");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> body(MockServerWebExchange exchange) {
        return json.readValue(exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5)), Map.class);
    }

    private static MockServerWebExchange exchange() {
        return MockServerWebExchange.from(MockServerHttpRequest.get("/api/hello"));
    }
}
