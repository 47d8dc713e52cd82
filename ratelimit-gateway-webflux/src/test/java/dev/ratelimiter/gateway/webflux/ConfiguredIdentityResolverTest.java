package dev.ratelimiter.gateway.webflux;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.ClaimSource;
import dev.ratelimiter.gateway.ExpressionSource;
import dev.ratelimiter.gateway.IdentityOrigin;
import dev.ratelimiter.gateway.IdentityRequest;
import dev.ratelimiter.gateway.IdentitySource;
import dev.ratelimiter.gateway.IdentityValue;
import dev.ratelimiter.gateway.RequestIdentityResolver;
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
        assertThat(caller).isEqualTo(new CallerIdentity("client-a", "alice", "t1", "pro", Map.of(),
                Map.of(Dimension.API_KEY, IdentityOrigin.CLAIM, Dimension.USER, IdentityOrigin.PRINCIPAL,
                        Dimension.TENANT, IdentityOrigin.REQUEST, Dimension.TIER, IdentityOrigin.CLAIM)));
        assertThat(caller.qualified(Dimension.API_KEY)).isEqualTo("claim:client-a");
        assertThat(caller.qualified(Dimension.USER)).isEqualTo("principal:alice");
        assertThat(caller.qualified(Dimension.TENANT)).as("a header-only list: the value as sent").isEqualTo("t1");
    }

    @Test
    void aHeaderInAListThatAlsoReadsTheTokenIsUnvouchedAndNoHeaderSpellsATokensValue() {
        CallerIdentity anonymous = resolve(claimThenHeader, MockServerWebExchange.from(MockServerHttpRequest
                .get("/api/x").header("X-API-Key", "claim:client-a")));
        assertThat(anonymous.origin(Dimension.API_KEY)).isEqualTo(IdentityOrigin.UNVOUCHED);
        assertThat(anonymous.qualified(Dimension.API_KEY)).isEqualTo("header:claim:client-a");
        assertThat(IdentityOrigin.REQUEST.qualify("acme-key")).isEqualTo("acme-key");
        assertThat(IdentityOrigin.REQUEST.qualify("address:127.0.0.1")).isEqualTo("header:address:127.0.0.1");
        assertThat(IdentityOrigin.REQUEST.qualify("header:x")).isEqualTo("header:header:x");
    }

    @Test
    void anExpressionsValueIsTheTokensOnlyWhenItReadNothingButTheToken() {
        ExpressionSource claimFirst = new ExpressionSource("e", "claims['org'] ?: headers['X-Org']", true);
        ServerWebExchange withClaim = withToken(MockServerHttpRequest.get("/a").header("X-Org", "h"),
                Map.of("org", "acme"));
        assertThat(value(claimFirst, withClaim)).isEqualTo(new IdentityValue("acme", IdentityOrigin.TOKEN_EXPRESSION));
        assertThat(value(claimFirst, withToken(MockServerHttpRequest.get("/a").header("X-Org", "h"), Map.of())))
                .isEqualTo(new IdentityValue("h", IdentityOrigin.REQUEST));
        assertThat(value(claimFirst, MockServerWebExchange.from(MockServerHttpRequest.get("/a")))).isNull();
        ExpressionSource headerFirst = new ExpressionSource("e", "headers['X-Org'] ?: claims['org']", true);
        assertThat(value(headerFirst, withClaim)).as("the header read first: the client chose")
                .isEqualTo(new IdentityValue("h", IdentityOrigin.REQUEST));
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

    private static IdentityValue value(IdentitySource source, ServerWebExchange exchange) {
        return source.value(new ExchangeIdentityRequest(exchange), exchange.getPrincipal().block(Duration.ofSeconds(1)));
    }

    private static String read(IdentitySource source, ServerWebExchange exchange) {
        return source.read(new ExchangeIdentityRequest(exchange), exchange.getPrincipal().block(Duration.ofSeconds(1)));
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
