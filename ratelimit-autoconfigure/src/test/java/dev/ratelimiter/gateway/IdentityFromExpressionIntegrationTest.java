package dev.ratelimiter.gateway;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The API key from an application's Spring Cloud Gateway {@code KeyResolver} bean, the tenant and the user from SpEL
 * expressions over the request, through a started gateway and real Redis.
 */
class IdentityFromExpressionIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    static ConfigurableApplicationContext gateway;
    static WebTestClient client;

    @BeforeAll
    static void startGateway() {
        gateway = GatewayInstance.start(List.of(TestTokens.ResourceServer.class, ClientKeys.class),
                fixture.redis().url(), upstream.uri(), "ratelimit.store.type=redis", "ratelimit.store.timeout=2s",
                "ratelimit.identity.api-key.source=key-resolver", "ratelimit.identity.api-key.key-resolver=clientKey",
                "ratelimit.identity.tenant.source=expression",
                "ratelimit.identity.tenant.expression=headers['X-Org'] != null ? 'org:' + headers['X-Org'] "
                        + ": (query['org'] ?: claims['org'])",
                // the header and the query may name any tenant here, as the claim does: counted as given
                "ratelimit.identity.tenant.unknown.policy=accept",
                // a property of a string, which only the root has: fails on every request, whatever it carries
                "ratelimit.identity.user.source=expression",
                "ratelimit.identity.user.expression=headers['X-Name'].path",
                "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=3", "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.tiers.free.limits.default.refill-period=1h",
                "ratelimit.rules.tenant-cap.key=tenant", "ratelimit.rules.tenant-cap.match.paths=/api/tenant/**",
                "ratelimit.rules.tenant-cap.capacity=1", "ratelimit.rules.tenant-cap.refill-tokens=1",
                "ratelimit.rules.tenant-cap.refill-period=1h",
                "ratelimit.rules.user-cap.key=user", "ratelimit.rules.user-cap.when-missing=deny",
                "ratelimit.rules.user-cap.match.paths=/api/user/**", "ratelimit.rules.user-cap.capacity=100",
                "ratelimit.rules.user-cap.refill-tokens=1", "ratelimit.rules.user-cap.refill-period=1h");
        client = GatewayInstance.client(gateway);
    }

    @AfterAll
    static void stopGateway() {
        gateway.close();
    }

    @Test
    void theKeyResolverGivesTheApiKeyAndItsEmptyKeyIsNoKey() {
        assertThat(statuses(4, "/api/x?client=c1", headers -> { })).containsExactly(200, 200, 200, 429);
        assertThat(statuses(1, "/api/x?client=c2", headers -> { })).containsExactly(200);

        EntityExchangeResult<String> refused = client.get().uri("/api/x").exchange().expectBody(String.class)
                .returnResult();
        assertThat(refused.getStatus().value()).isEqualTo(401);
        assertThat(refused.getResponseBody()).contains("\"detail\":\"This API requires an API key in the request, "
                + "as the KeyResolver 'clientKey' reads it.\"", "\"error\":\"missing_api_key\"");
        assertThat(upstream.hits()).isEqualTo(4);
    }

    @Test
    void theTenantIsTheExpressionsValueFromAHeaderOrElseAClaim() {
        assertThat(statuses(2, "/api/tenant/x?client=c3", headers -> headers.set("X-Org", "o1")))
                .containsExactly(200, 429);
        String orgO1 = TestTokens.token("u1", Map.of("org", "org:o1"));
        assertThat(statuses(1, "/api/tenant/x?client=c3", headers -> headers.setBearerAuth(orgO1)))
                .as("the claim names the same tenant").containsExactly(429);
        String orgO2 = TestTokens.token("u1", Map.of("org", "org:o2"));
        assertThat(statuses(1, "/api/tenant/x?client=c3", headers -> headers.setBearerAuth(orgO2)))
                .containsExactly(200);
    }

    @Test
    void aHeaderTheExpressionReadsSentTwiceIsRefusedAsAmbiguousNeverCountedOnTheFirstValue() {
        EntityExchangeResult<String> refused = client.get().uri("/api/tenant/x?client=c5")
                .headers(headers -> headers.addAll("X-Org", List.of("victim", "mine"))).exchange()
                .expectBody(String.class).returnResult();
        assertThat(refused.getStatus().value()).as(refused.getResponseBody()).isEqualTo(400);
        assertThat(refused.getResponseBody()).contains("\"error\":\"duplicate_identity_header\"",
                "\"header\":\"X-Org\"");
        assertThat(statuses(1, "/api/tenant/x?client=c5", headers -> headers.set("X-Org", "victim")))
                .as("the victim's tenant was not charged").containsExactly(200);
        assertThat(upstream.hits()).isEqualTo(1);
    }

    @Test
    void aQueryParameterTheExpressionReadsSentTwiceIsRefusedAsAmbiguousWhicheverValueAnUpstreamReads() {
        long before = upstream.hits();
        EntityExchangeResult<String> refused = client.get().uri("/api/tenant/x?client=c6&org=victim&org=mine")
                .exchange().expectBody(String.class).returnResult();
        assertThat(refused.getStatus().value()).as(refused.getResponseBody()).isEqualTo(400);
        assertThat(refused.getResponseBody()).contains("\"error\":\"duplicate_identity_header\"",
                "\"parameter\":\"org\"", "The query parameter 'org' appears more than once; send it once.");
        assertThat(statuses(1, "/api/tenant/x?client=c6&org=victim", headers -> { }))
                .as("the victim's tenant was not charged").containsExactly(200);
        assertThat(statuses(1, "/api/tenant/x?client=c6&org=victim", headers -> { })).containsExactly(429);
        assertThat(upstream.hits() - before).isEqualTo(1);
    }

    @Test
    void anExpressionThatFailsOnARequestIsDecidedAsMissingItsValueNeverA500() {
        for (Consumer<HttpHeaders> headers : List.<Consumer<HttpHeaders>>of(h -> h.set("X-Name", "n"), h -> { })) {
            EntityExchangeResult<String> refused = client.get().uri("/api/user/x?client=c4").headers(headers)
                    .exchange().expectBody(String.class).returnResult();
            assertThat(refused.getStatus().value()).isEqualTo(400);
            assertThat(refused.getResponseBody()).contains("\"detail\":\"Limit 'user-cap' needs the value of "
                    + "ratelimit.identity.user.expression, which this request lacks.\"", "\"error\":\"missing_identity\"");
        }
        assertThat(upstream.hits()).isZero();
    }

    private static List<Integer> statuses(int requests, String path, Consumer<HttpHeaders> headers) {
        return Requests.statuses(client, requests, path, headers);
    }

    @Configuration(proxyBeanMethods = false)
    static class ClientKeys {

        /**
         * As an application would have written it for Spring Cloud Gateway's own limiter: the {@code client} query
         * parameter, answered on another thread, and its empty-key placeholder when there is none.
         */
        @Bean
        KeyResolver clientKey() {
            return exchange -> Mono.fromSupplier(() -> {
                String client = exchange.getRequest().getQueryParams().getFirst("client");
                return client != null ? client : "____EMPTY_KEY__";
            }).subscribeOn(Schedulers.parallel());
        }
    }
}
