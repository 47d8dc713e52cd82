package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.Dimension;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpCookie;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationToken;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/** The configured resolver's pure logic: source order, ambiguity, what an expression can see. */
class ConfiguredIdentityResolverTest {

    private final ConfiguredIdentityResolver claimThenHeader = new ConfiguredIdentityResolver(
            List.of(new ClaimSource("azp"), IdentitySource.header("X-API-Key")), List.of(IdentitySource.principal()),
            List.of(IdentitySource.header("X-Tenant-Id")), new ClaimSource("plan"), null, null);

    @Test
    void theFirstSourceWithAValueGivesItAndALaterHeaderIsNotRead() {
        CallerIdentity caller = resolve(claimThenHeader, withToken(MockServerHttpRequest.get("/api/x")
                .header("X-API-Key", "a", "b").header("X-Tenant-Id", "t1"), Map.of("azp", "client-a", "plan", "pro")));
        assertThat(caller).isEqualTo(new CallerIdentity("client-a", "alice", "t1", "pro", Map.of()));
    }

    @Test
    void aHeaderSentTwiceWhereItIsReadMakesTheDimensionAmbiguous() {
        CallerIdentity caller = resolve(claimThenHeader, MockServerWebExchange.from(MockServerHttpRequest
                .get("/api/x").header("X-API-Key", "a", "b").header("X-Tenant-Id", "t1", "t2")));
        assertThat(caller.apiKey()).isNull();
        assertThat(caller.ambiguous()).containsExactlyInAnyOrderEntriesOf(Map.of(Dimension.API_KEY,
                RepeatedName.header("X-API-Key"), Dimension.TENANT, RepeatedName.header("X-Tenant-Id")));
        assertThat(caller.user()).as("no principal").isNull();
        assertThat(caller.tier()).isNull();
    }

    @Test
    void anExpressionReadsTheRequestAndTheClaimsAndNothingElse() {
        ExpressionSource expression = new ExpressionSource("e", "headers['X-Org'] != null ? headers['X-Org'] : "
                + "(query['org'] ?: (cookies['org'] ?: claims['org'] + '@' + route + ':' + method + ' ' + path))",
                true);
        assertThat(read(expression, MockServerWebExchange.from(MockServerHttpRequest.get("/a?org=q")
                .header("X-Org", "h")))).isEqualTo("h");
        assertThat(read(expression, MockServerWebExchange.from(MockServerHttpRequest.get("/a?org=q"))))
                .isEqualTo("q");
        assertThat(read(expression, MockServerWebExchange.from(MockServerHttpRequest.get("/a")
                .cookie(new HttpCookie("org", "c"))))).isEqualTo("c");
        assertThat(read(expression, withToken(MockServerHttpRequest.post("/a/b"), Map.of("org", "acme"))))
                .isEqualTo("acme@null:POST /a/b");
        assertThat(expression.readsPrincipal()).isTrue();
        assertThat(new ExpressionSource("e", "headers['X-Org']", false).readsPrincipal()).isFalse();
    }

    @Test
    void anExpressionThatFailsOnARequestGivesNoValue() {
        ExpressionSource failing = new ExpressionSource("e", "headers['X-Org'].path", true);
        assertThat(read(failing, MockServerWebExchange.from(MockServerHttpRequest.get("/a").header("X-Org", "o"))))
                .isNull();
        assertThat(read(failing, MockServerWebExchange.from(MockServerHttpRequest.get("/a")))).isNull();
    }

    private static String read(IdentitySource source, ServerWebExchange exchange) {
        return source.read(IdentityRequest.of(exchange), exchange.getPrincipal().block(Duration.ofSeconds(1)));
    }

    private static CallerIdentity resolve(RequestIdentityResolver resolver, ServerWebExchange exchange) {
        return resolver.resolve(exchange).block(Duration.ofSeconds(5));
    }

    private static ServerWebExchange withToken(MockServerHttpRequest.BaseBuilder<?> request, Map<String, Object> claims) {
        Jwt jwt = Jwt.withTokenValue("token").header("alg", "HS256").subject("alice").claims(all -> all.putAll(claims))
                .build();
        return MockServerWebExchange.from(request).mutate().principal(Mono.just(new JwtAuthenticationToken(jwt)))
                .build();
    }
}
