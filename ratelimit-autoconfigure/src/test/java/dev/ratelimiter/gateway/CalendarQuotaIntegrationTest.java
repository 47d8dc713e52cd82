package dev.ratelimiter.gateway;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static dev.ratelimiter.gateway.RulesApiClient.IF_NONE_MATCH;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A calendar quota through a whole gateway on a real Redis: a daily quota from application properties answers with
 * its policy ({@code q=2;w=86400}) and points RateLimit, X-RateLimit-Reset and a refusal's Retry-After at midnight
 * UTC; through the rules API a monthly billing quota is put and read back as it was sent, and bad quota settings are
 * refused with a problem naming the setting, the rules in force unchanged.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class CalendarQuotaIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTests();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @Autowired
    ConfigurableApplicationContext context;

    WebTestClient client;
    RulesApiClient api;
    WebTestClient admin;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        fixture.route(registry, 1, "billed", "/billed/**");
        registry.add("management.server.port", () -> "0");
        registry.add("management.server.address", () -> "127.0.0.1");
        registry.add("ratelimit.management.security.enabled", () -> "true");
        registry.add("ratelimit.management.security.admin.password", () -> RulesApiIntegrationTest.ADMIN_PASSWORD);
        registry.add("ratelimit.management.security.viewer.password", () -> RulesApiIntegrationTest.VIEWER_PASSWORD);
        registry.add("ratelimit.store.type", () -> "redis");
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "1000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1000");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
        registry.add("ratelimit.rules.daily.key[0]", () -> "api-key");
        registry.add("ratelimit.rules.daily.match.route-ids[0]", () -> "api");
        registry.add("ratelimit.rules.daily.algorithm", () -> "calendar-quota");
        registry.add("ratelimit.rules.daily.period", () -> "day");
        registry.add("ratelimit.rules.daily.limit", () -> "2");
    }

    @BeforeEach
    void clients() {
        GatewayInstance.awaitRedis(context);
        client = GatewayInstance.client(port);
        api = new RulesApiClient(managementPort, "/v1/rules");
        admin = api.as(RulesApiIntegrationTest.ADMIN, RulesApiIntegrationTest.ADMIN_PASSWORD);
    }

    private EntityExchangeResult<String> get(String path, String apiKey) {
        return client.get().uri(path).header("X-API-Key", apiKey).exchange().expectBody(String.class).returnResult();
    }

    private static long midnightUtcAfter(long epochSecond) {
        return LocalDate.ofInstant(Instant.ofEpochSecond(epochSecond), ZoneOffset.UTC).plusDays(1).atStartOfDay()
                .toEpochSecond(ZoneOffset.UTC);
    }

    @Test
    void theHeadersPointAtMidnightAndARefusalRetriesThere() {
        long before = Instant.now().getEpochSecond();
        EntityExchangeResult<String> first = get("/api/x", "quota-headers");
        EntityExchangeResult<String> second = get("/api/x", "quota-headers");
        EntityExchangeResult<String> refused = get("/api/x", "quota-headers");
        long after = Instant.now().getEpochSecond() + 1;
        long midnight = midnightUtcAfter(before);
        assertThat(midnightUtcAfter(after)).as("the test did not run across midnight UTC").isEqualTo(midnight);
        assertThat(List.of(first.getStatus().value(), second.getStatus().value(), refused.getStatus().value()))
                .containsExactly(200, 200, 429);
        HttpHeaders headers = first.getResponseHeaders();
        assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("2");
        assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("1");
        assertThat(Long.parseLong(headers.getFirst("X-RateLimit-Reset"))).isBetween(midnight - 1, midnight + 1);
        assertThat(headers.getFirst("RateLimit-Policy")).contains("\"daily\";q=2;w=86400");
        String rateLimit = headers.getFirst("RateLimit");
        assertThat(rateLimit).startsWith("\"daily\";r=1;t=");
        assertThat(Long.parseLong(rateLimit.substring(rateLimit.indexOf("t=") + 2)))
                .isBetween(midnight - after, midnight - before + 1);
        HttpHeaders refusal = refused.getResponseHeaders();
        assertThat(Long.parseLong(refusal.getFirst("Retry-After"))).as("Retry-After: to midnight UTC")
                .isBetween(midnight - after, midnight - before + 1);
        assertThat(refusal.getFirst("X-RateLimit-Remaining")).isEqualTo("0");
        assertThat(upstream.hitsForApiKey("quota-headers")).isEqualTo(2);
        // another client has its own count
        assertThat(get("/api/x", "quota-other").getStatus().value()).isEqualTo(200);
    }

    @Test
    void aBillingMonthPutThroughTheApiIsReadBackAndLimits() {
        String document = "{\"dimension\": [\"api-key\"], \"match\": {\"routes\": [\"billed\"]}, \"algorithm\": "
                + "\"calendar-quota\", \"limit\": 1, \"period\": \"month\", \"zone\": \"Europe/Berlin\", "
                + "\"anchorDay\": 31}";
        EntityExchangeResult<String> put = api.put(admin, "billing", document, IF_NONE_MATCH, "*");
        assertThat(put.getStatus().value()).as(put.getResponseBody()).isEqualTo(200);
        JsonNode read = RulesApiIntegrationTest.json(admin.get().uri(api.rule("billing")).exchange()
                .expectBody(String.class).returnResult());
        assertThat(read.get("algorithm").asString()).isEqualTo("calendar-quota");
        assertThat(read.get("limit").asLong()).isEqualTo(1);
        assertThat(read.get("period").asString()).isEqualTo("month");
        assertThat(read.get("zone").asString()).isEqualTo("Europe/Berlin");
        assertThat(read.get("anchorDay").asInt()).isEqualTo(31);
        assertThat(read.has("weekStart")).isFalse();
        assertThat(get("/billed/x", "billed-client").getStatus().value()).isEqualTo(200);
        assertThat(get("/billed/x", "billed-client").getStatus().value()).isEqualTo(429);
    }

    @Test
    void badQuotaSettingsAreRefusedWithAProblemNamingTheSetting() {
        String valid = "\"algorithm\": \"calendar-quota\", \"limit\": 10";
        List<String[]> cases = List.of(
                new String[] { "{" + valid + ", \"period\": \"year\"}", "period", "day, week or month" },
                new String[] { "{" + valid + "}", "period", "day, week or month" },
                new String[] { "{" + valid + ", \"period\": \"day\", \"zone\": \"Mars/Olympus\"}", "zone",
                        "time zone id" },
                new String[] { "{" + valid + ", \"period\": \"month\", \"anchorDay\": 0}", "anchor-day",
                        "1 to 31" },
                new String[] { "{" + valid + ", \"period\": \"month\", \"anchorDay\": 32}", "anchor-day",
                        "1 to 31" },
                new String[] { "{" + valid + ", \"period\": \"day\", \"anchorDay\": 15}", "anchor-day",
                        "period month only" },
                new String[] { "{" + valid + ", \"period\": \"month\", \"weekStart\": \"sunday\"}", "week-start",
                        "period week only" },
                new String[] { "{" + valid + ", \"period\": \"day\", \"storeMode\": \"local\"}", "store-mode",
                        "store-mode exact" });
        for (String[] refused : cases) {
            EntityExchangeResult<String> answer = api.put(admin, "bad-quota", refused[0], IF_NONE_MATCH, "*");
            assertThat(answer.getStatus().value()).as(refused[0] + " -> " + answer.getResponseBody())
                    .isEqualTo(422);
            JsonNode problem = RulesApiIntegrationTest.json(answer);
            assertThat(problem.get("detail").asString()).as(refused[0]).contains(refused[2]);
            String field = problem.has("field") ? problem.get("field").asString() : "";
            assertThat(field.replace("-", "").toLowerCase(java.util.Locale.ROOT)).as(refused[0] + " -> " + problem)
                    .endsWith(refused[1].replace("-", ""));
        }
        admin.get().uri(api.rule("bad-quota")).exchange().expectStatus().isNotFound();
    }
}
