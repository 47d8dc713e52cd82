package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys nobody listed, under the per-address policy: an attacker rotating 10,000 fresh keys from one address gets
 * the address's small budget and no more, and leaves one short-lived bucket in Redis, not one (or two windows) per
 * key; another address has its own budget; listed keys and keys an override names keep their own limits.
 */
class UnknownApiKeysIntegrationTest {

    static final int BUDGET = 20;

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    static ConfigurableApplicationContext gateway;
    static int port;

    @BeforeAll
    static void start() {
        gateway = GatewayInstance.start(redis.url(), upstream.uri(),
                "management.endpoints.web.exposure.include=ratelimit",
                "ratelimit.store.timeout=2s",
                "ratelimit.identity.trusted-proxies=127.0.0.1/32",
                "ratelimit.default-tier=free",
                "ratelimit.tiers.free.api-keys=known-key,known-key-2",
                "ratelimit.tiers.free.limits.default.capacity=5",
                "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.tiers.free.limits.default.refill-period=1h",
                // a quota per key over every tier: under the old behaviour each junk key wrote its windows
                "ratelimit.rules.hourly.algorithm=sliding-window",
                "ratelimit.rules.hourly.limit=1000",
                "ratelimit.rules.hourly.window=1h",
                // a cap on one path for every client together, keyed by route: unknown keys count in it too
                "ratelimit.rules.capped.match.paths=/api/capped/**",
                "ratelimit.rules.capped.key=route",
                "ratelimit.rules.capped.capacity=8",
                "ratelimit.rules.capped.refill-tokens=8",
                "ratelimit.rules.capped.refill-period=1h",
                "ratelimit.api-key.unknown.policy=per-address",
                "ratelimit.api-key.unknown.limit.capacity=" + BUDGET,
                "ratelimit.api-key.unknown.limit.refill-tokens=" + BUDGET,
                "ratelimit.api-key.unknown.limit.refill-period=1h");
        port = GatewayInstance.port(gateway);
    }

    @AfterAll
    static void stop() {
        gateway.close();
        upstream.close();
    }

    @Test
    void tenThousandRotatingKeysFromOneAddressGetItsBudgetAndLeaveOneBucket() {
        Set<String> before = keys();
        long upstreamBefore = upstream.hits();
        AtomicInteger allowed = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger other = new AtomicInteger();
        WebClient client = WebClient.create("http://127.0.0.1:" + port);
        Flux.range(0, 10_000).flatMap(i -> client.get().uri("/api/x").header("X-API-Key", "junk-" + i)
                .header("X-Forwarded-For", "198.51.100.7").exchangeToMono(response -> {
                    (switch (response.statusCode().value()) {
                        case 200 -> allowed;
                        case 429 -> refused;
                        default -> other;
                    }).incrementAndGet();
                    return response.releaseBody();
                }), 16).blockLast(Duration.ofMinutes(3));

        assertThat(allowed.get()).isEqualTo(BUDGET);
        assertThat(refused.get()).isEqualTo(10_000 - BUDGET);
        assertThat(other.get()).isZero();
        assertThat(upstream.hits() - upstreamBefore).isEqualTo(BUDGET);
        Set<String> created = new TreeSet<>(keys());
        created.removeAll(before);
        assertThat(created).as("Redis keys the 10,000 unknown keys created").hasSize(1)
                .allSatisfy(key -> assertThat(key).contains(":unknown-api-key@"));
        for (String key : created) {
            long ttl = Long.parseLong(redis.command("PTTL", key).trim());
            assertThat(ttl).isPositive().isLessThanOrEqualTo(Duration.ofHours(1).toMillis());
        }
    }

    @Test
    void anotherAddressHasItsOwnBudgetAndTheRefusalNamesTheBucket() {
        WebClient client = WebClient.create("http://127.0.0.1:" + port);
        int allowed = 0;
        String policy = null;
        for (int i = 0; i < BUDGET + 5; i++) {
            var response = client.get().uri("/api/x").header("X-API-Key", "other-" + i)
                    .header("X-Forwarded-For", "203.0.113.9").retrieve().toBodilessEntity()
                    .onErrorResume(org.springframework.web.reactive.function.client.WebClientResponseException.class,
                            ex -> reactor.core.publisher.Mono.just(org.springframework.http.ResponseEntity
                                    .status(ex.getStatusCode()).headers(ex.getHeaders()).build()))
                    .block(Duration.ofSeconds(10));
            if (response.getStatusCode().value() == 200) {
                allowed++;
            }
            else {
                policy = response.getHeaders().getFirst("RateLimit-Policy");
            }
        }
        assertThat(allowed).isEqualTo(BUDGET);
        assertThat(policy).contains("\"unknown-api-key\"");
    }

    @Test
    void rotatingKeysAndAddressesGetNoMoreThanACapForEveryClient() {
        WebClient client = WebClient.create("http://127.0.0.1:" + port);
        List<Integer> statuses = Flux.range(0, 30).concatMap(i -> client.get().uri("/api/capped/x")
                .header("X-API-Key", "capped-" + i).header("X-Forwarded-For", "192.0.2." + (100 + i % 10))
                .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value())))
                .collectList().block(Duration.ofSeconds(30));
        assertThat(statuses.stream().filter(status -> status == 200).count()).isEqualTo(8);
        // and the cap was spent for everybody: a listed key is refused by it now
        assertThat(client.get().uri("/api/capped/x").header("X-API-Key", "known-key-2")
                .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value()))
                .block(Duration.ofSeconds(10))).isEqualTo(429);
    }

    @Test
    void listedKeysAndKeysAnOverrideNamesKeepTheirOwnLimits() {
        WebClient client = WebClient.create("http://127.0.0.1:" + port);
        assertThat(statuses(client, "known-key", 7)).containsExactly(200, 200, 200, 200, 200, 429, 429);

        Map<String, Object> put = client.post().uri("/actuator/ratelimit/late-customer").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("group", "tier-default", "matchApiKeys", "late-key", "capacity", "3",
                        "refillTokens", "1", "refillPeriod", "1h"))
                .retrieve().bodyToMono(new org.springframework.core.ParameterizedTypeReference<Map<String, Object>>() { })
                .block(Duration.ofSeconds(10));
        assertThat(put).containsKey("version");
        assertThat(statuses(client, "late-key", 4)).containsExactly(200, 200, 200, 429);
    }

    static List<Integer> statuses(WebClient client, String key, int requests) {
        return Flux.range(0, requests).concatMap(i -> client.get().uri("/api/x").header("X-API-Key", key)
                .header("X-Forwarded-For", "192.0.2.44")
                .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value())))
                .collectList().block(Duration.ofSeconds(30));
    }

    static Set<String> keys() {
        return new TreeSet<>(redis.command("KEYS", "*").lines().filter(line -> !line.isBlank()).toList());
    }
}
