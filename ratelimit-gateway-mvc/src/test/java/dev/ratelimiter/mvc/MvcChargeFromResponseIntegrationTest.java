package dev.ratelimiter.mvc;

import java.time.Duration;
import dev.ratelimiter.testsupport.UsageUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import java.io.IOException;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * charge-from-response on Gateway Server MVC, through a started gateway, a real Redis and an upstream that reports
 * usage: the servlet response's bytes read as they are written (a JSON field cut across chunks, server-sent events),
 * or a header, and the rest charged once the servlet is done with the request; nothing more for an error status.
 */
class MvcChargeFromResponseIntegrationTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final UsageUpstream upstream = new UsageUpstream();

    static ConfigurableApplicationContext gateway;
    static Http client;

    @BeforeAll
    static void startGateway() {
        gateway = MvcGatewayApplications.start(fixture, "ratelimit.store.timeout=2s",
                "spring.cloud.gateway.server.webmvc.routes[0].uri=" + upstream.uri(),
                "ratelimit.rules.llm.match.paths[0]=/api/json/**", "ratelimit.rules.llm.match.paths[1]=/api/sse/**",
                "ratelimit.rules.llm.match.paths[2]=/api/error/**",
                "ratelimit.rules.llm.capacity=1000", "ratelimit.rules.llm.refill-tokens=1000",
                "ratelimit.rules.llm.refill-period=1h",
                "ratelimit.rules.llm.charge-from-response.json-field=usage.total_tokens",
                "ratelimit.rules.llm.charge-from-response.minimum=10",
                "ratelimit.rules.by-header.match.paths[0]=/api/header/**", "ratelimit.rules.by-header.capacity=1000",
                "ratelimit.rules.by-header.refill-tokens=1000", "ratelimit.rules.by-header.refill-period=1h",
                "ratelimit.rules.by-header.charge-from-response.header=X-Usage-Tokens",
                "ratelimit.rules.by-header.charge-from-response.minimum=10");
        client = new Http(MvcGatewayApplications.port(gateway, false));
    }

    @AfterAll
    static void stopGateway() {
        gateway.close();
        upstream.close();
    }

    @Test
    void aJsonFieldAStreamAndAHeaderAreCharged() throws Exception {
        assertCharged("/api/json/chat", "mvc-json", 300);
        assertCharged("/api/sse/chat", "mvc-sse", 410);
        assertCharged("/api/header/chat", "mvc-header", 510);
    }

    @Test
    void anErrorStatusIsChargedOnlyTheMinimum() throws Exception {
        HttpResponse<String> failed = call("/api/error/chat", "mvc-error", 300);
        assertThat(failed.statusCode()).isEqualTo(500);
        HttpResponse<String> next = call("/api/json/chat", "mvc-error", 1);
        // 1,000 less the two minimums (and a token or so refilled in between)
        assertThat(remaining(next)).isBetween(980L, 981L);
    }

    /**
     * The first answer spends the minimum; once its charge lands, each next request (reporting less than the minimum,
     * so charged nothing more) shows 1,000 less what the first reported and 10 per request since.
     */
    private static void assertCharged(String path, String apiKey, long usage) throws Exception {
        HttpResponse<String> first = call(path, apiKey, usage);
        assertThat(first.statusCode()).isEqualTo(200);
        // forwarded as the upstream sent it: in the body, or in the header
        assertThat(first.body() + first.headers().firstValue("X-Usage-Tokens").orElse(""))
                .contains(String.valueOf(usage));
        assertThat(remaining(first)).isEqualTo(990);
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        for (int polls = 1; ; polls++) {
            long left = remaining(call(path, apiKey, 1));
            long charged = 1000 - usage - 10L * polls;
            if (left <= charged + 2 || System.nanoTime() > deadline) {
                assertThat(left).as("left after %d polls", polls).isBetween(charged, charged + 2);
                return;
            }
            assertThat(left).as("not yet charged: the minimums alone").isBetween(990 - 10L * polls,
                    990 - 10L * polls + 2);
        }
    }

    private static HttpResponse<String> call(String path, String apiKey, long usage) throws IOException,
            InterruptedException {
        return client.getAs(path, null, "X-API-Key", apiKey, "X-Test-Usage", String.valueOf(usage));
    }

    private static long remaining(HttpResponse<?> result) {
        return Long.parseLong(result.headers().firstValue("X-RateLimit-Remaining").orElseThrow());
    }
}
