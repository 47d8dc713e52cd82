package dev.ratelimiter.gateway;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Prometheus scrape moves with the traffic, carries no client identity, and has every series the Grafana
 * dashboard in {@code src/docs/grafana} queries.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class PrometheusScrapeTest {

    static final Path DASHBOARD = Path.of("..", "src", "docs", "grafana", "ratelimit-dashboard.json");

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("management.endpoints.web.exposure.include", () -> "prometheus,ratelimit");
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "20");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
        registry.add("ratelimit.rules.watch.capacity", () -> "5");
        registry.add("ratelimit.rules.watch.refill-tokens", () -> "1");
        registry.add("ratelimit.rules.watch.refill-period", () -> "1h");
        registry.add("ratelimit.rules.watch.mode", () -> "shadow");
        registry.add("ratelimit.shedding.upstreams.api.max-in-flight", () -> "50");
    }

    @Test
    void decisionCountersMoveWithTheTrafficWithoutAnyClientIdentityAndFeedTheDashboard() throws IOException {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
        // Counts are compared with a scrape taken before, so that other tests' traffic does not count.
        String before = scrape(client);
        for (int i = 0; i < 30; i++) {
            client.get().uri("/api/x").header("X-API-Key", "scrape-key").exchange();
        }
        String scrape = scrape(client);

        assertThat(delta(before, scrape, "ratelimit_decisions_total", "outcome=\"allowed\"", "rule=\"free.default\"",
                "tier=\"free\"", "route_class=\"default\"")).isEqualTo(20);
        assertThat(delta(before, scrape, "ratelimit_decisions_total", "outcome=\"denied\"", "rule=\"free.default\""))
                .isEqualTo(10);
        // Requests 6 to 21 reach the store and the shadow rule of 5 would deny them; from the 22nd on, the denial
        // cache answers the client's refusals without asking the store (or the shadow rule).
        assertThat(delta(before, scrape, "ratelimit_shadow_denials_total", "rule=\"watch\""))
                .as("shadow rule of 5").isEqualTo(16);
        assertThat(delta(before, scrape, "ratelimit_near_limit_requests_total", "rule=\"free.default\""))
                .as("allowed with < 4 left").isEqualTo(4);
        assertThat(sample(scrape, "ratelimit_upstream_limit_requests", "upstream=\"api\"")).isEqualTo(50);
        assertThat(scrape).doesNotContain("scrape-key").doesNotContain(ClientIds.unkeyed().of("scrape-key"));

        Set<String> queried = new TreeSet<>();
        Matcher names = Pattern.compile("ratelimit_[a-z_]+").matcher(Files.readString(DASHBOARD));
        while (names.find()) {
            queried.add(names.group());
        }
        assertThat(queried).hasSizeGreaterThan(10);
        assertThat(queried).allSatisfy(name -> assertThat(scrape).as("series the dashboard queries")
                .containsPattern("(?m)^" + name + "[{ ]"));
    }

    @Test
    void theActuatorViewShowsTheStoreTheInstancesTheMostDeniedClientsAndTheLatestDecisions() {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
        for (int i = 0; i < 25; i++) {
            client.get().uri("/api/x").header("X-API-Key", "viewed-key").exchange();
        }
        String hashed = ClientIds.unkeyed().of("viewed-key");
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(10).toNanos();
        String view;
        do {
            view = client.get().uri("/actuator/ratelimit").exchange().expectStatus().isOk().expectBody(String.class)
                    .returnResult().getResponseBody();
        }
        while (!view.contains("\"" + hashed + "\":5") && System.nanoTime() < deadline);
        assertThat(view).as("5 denials of the 25 requests, by hashed client id").contains("\"" + hashed + "\":5")
                .contains("\"store\":{\"type\":\"redis\",\"breaker\":\"CLOSED\"").contains("\"liveInstances\":1")
                .contains("\"recentDecisions\":[{").contains("\"verdict\":\"denied\"").doesNotContain("viewed-key");
    }

    private static String scrape(WebTestClient client) {
        return client.get().uri("/actuator/prometheus").exchange().expectStatus().isOk().expectBody(String.class)
                .returnResult().getResponseBody();
    }

    private static double delta(String before, String after, String name, String... labels) {
        double was = sample(before, name, labels);
        return sample(after, name, labels) - (Double.isNaN(was) ? 0 : was);
    }

    /** The value of the one sample of {@code name} whose labels include all of {@code labels}. */
    private static double sample(String scrape, String name, String... labels) {
        double found = Double.NaN;
        for (String line : scrape.split("\n")) {
            if (line.startsWith(name + "{") && java.util.Arrays.stream(labels).allMatch(line::contains)) {
                assertThat(Double.isNaN(found)).as("one sample of %s with %s", name, String.join(",", labels))
                        .isTrue();
                found = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return found;
    }
}
