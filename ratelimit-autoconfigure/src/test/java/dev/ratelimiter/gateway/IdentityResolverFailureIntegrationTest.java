package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A user's own {@link RequestIdentityResolver} that fails in every way a Mono can, on started gateways with a real
 * Redis: an error, a throw before any Mono, an empty answer, no answer ever (bounded by
 * {@code ratelimit.identity.resolve-timeout}), a late answer from another thread. Never a 500 and never
 * unlimited: the request is decided as one without identity (the per-address cap still counts it); with the kill
 * switch on, everything passes.
 */
class IdentityResolverFailureIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    static final List<String> MODES = List.of("error", "throw", "empty", "null", "never", "late");

    static ConfigurableApplicationContext gateway;

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
    }

    private static ConfigurableApplicationContext start(String... more) {
        List<String> properties = new java.util.ArrayList<>(List.of("ratelimit.store.type=redis",
                "ratelimit.store.timeout=2s", "ratelimit.api-key.when-missing=allow", "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=2", "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.tiers.free.limits.default.refill-period=1h",
                // well above the late answer's 200 ms, well below the test client's 5 s
                "ratelimit.identity.resolve-timeout=800ms"));
        for (String mode : MODES) {
            // one per-address bucket per mode (each mode's requests on its own path)
            String rule = "ratelimit.rules.per-address-" + mode;
            properties.addAll(List.of(rule + ".key=client-ip", rule + ".match.paths=/api/" + mode + "/**",
                    rule + ".capacity=3", rule + ".refill-tokens=1", rule + ".refill-period=1h"));
        }
        properties.addAll(List.of(more));
        return GatewayInstance.start(List.of(FailingResolver.class), fixture.redis().url(), upstream.uri(),
                properties.toArray(String[]::new));
    }

    @Test
    void aFailingResolverIsNeverA500AndNeverUnlimited() {
        gateway = start();
        WebTestClient client = GatewayInstance.client(gateway);
        for (String mode : List.of("error", "throw", "empty", "null", "never")) {
            List<Integer> statuses = Requests.statuses(client, 4, "/api/" + mode + "/x?mode=" + mode, headers -> { });
            assertThat(statuses).as(mode).containsExactly(200, 200, 200, 429);
        }
        assertThat(Requests.statuses(client, 3, "/api/late/x?mode=late&key=k1", headers -> { }))
                .as("a late answer is waited for and counted").containsExactly(200, 200, 429);
        gateway.close();
    }

    @Test
    void withTheKillSwitchOnAFailingResolverLetsEverythingThrough() {
        gateway = start("ratelimit.kill-switch=true");
        WebTestClient client = GatewayInstance.client(gateway);
        for (String mode : MODES) {
            assertThat(Requests.statuses(client, 5, "/api/" + mode + "/x?mode=" + mode + "&key=k2", headers -> { }))
                    .as(mode)
                    .containsOnly(200);
        }
        gateway.close();
    }

    @Configuration(proxyBeanMethods = false)
    static class FailingResolver {

        @Bean
        RequestIdentityResolver failingResolver() {
            return exchange -> {
                String mode = exchange.getRequest().getQueryParams().getFirst("mode");
                String key = exchange.getRequest().getQueryParams().getFirst("key");
                return switch (mode == null ? "" : mode) {
                    case "error" -> Mono.error(new IllegalStateException("resolver bug"));
                    case "throw" -> throw new IllegalStateException("resolver bug before any Mono");
                    case "empty" -> Mono.empty();
                    case "null" -> null;
                    case "never" -> Mono.never();
                    case "late" -> Mono.delay(Duration.ofMillis(200), Schedulers.parallel())
                            .map(tick -> new CallerIdentity(key, null, null, null, Map.of()));
                    default -> Mono.just(new CallerIdentity(key, null, null, null, Map.of()));
                };
            };
        }
    }
}
