package dev.ratelimiter.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.ClaimSource;
import dev.ratelimiter.gateway.ExpressionSource;
import dev.ratelimiter.gateway.IdentityRequest;
import dev.ratelimiter.gateway.IdentitySource;
import dev.ratelimiter.gateway.RepeatedName;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpCookie;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationToken;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Attacks on the identity sources: the expression sandbox, repeated headers read by an expression, key resolvers. */
class IdentityAttackTest {

    /** A claim value whose getters must never run: the expression may only read strings and maps. */
    public static final class Sensitive {

        static final AtomicInteger calls = new AtomicInteger();

        public String getSecret() {
            calls.incrementAndGet();
            return "leaked";
        }

        @Override
        public String toString() {
            return "sensitive";
        }
    }

    @Test
    void expressionsThatReachBeyondTheRootAreRefusedAtStartUp() {
        List<String> escapes = List.of("T(java.lang.Runtime).getRuntime().exec('id')", "headers.getClass()",
                "headers['a'].toUpperCase()", "new java.io.File('/')", "@environment", "&factoryBean",
                "#systemProperties['user.home']", "#root.class", "headers.class", "path.bytes", "claims.class",
                "principal = 'x'", "headers['a'] = 'b'", "claims['o'].secret", "#this.headers.size",
                "headers.?[true].class", "headers.![#this].size()", "T(String)", "'a'.concat('b')",
                "#{1}", "headers['x'] instanceof T(String)", "claims['o']?.secret");
        List<String> accepted = new ArrayList<>();
        for (String escape : escapes) {
            try {
                new ExpressionSource("e", escape, true);
                accepted.add(escape);
            }
            catch (InvalidLimitException refused) {
                // refused: what we want
            }
        }
        assertThat(accepted).as("expressions that should fail the start-up").isEmpty();
    }

    @Test
    void whatTheSandboxLetsThroughNeverCallsAGetterOfAReachedValue() {
        ServerWebExchange exchange = withToken(MockServerHttpRequest.get("/a").header("X-A", "x"),
                Map.of("o", new Sensitive(), "m", Map.of("secret", "in-map"), "l", List.of("a", "b")));
        List<String> probes = List.of("claims['o']['secret']", "claims['o']['class']", "path['bytes']",
                "headers['X-A']['bytes']", "#root['headers']['X-A']", "claims['l'][0]", "claims['m']['secret']",
                "claims['o'] + ''", "path[0]", "headers.?[true]", "claims.![#this]", "claims['l'].^[true]",
                "{1,2}[0] + ''", "headers['X-A'] matches '.*'", "'a' * 3", "#this['claims']['o']['secret']");
        Map<String, String> read = new java.util.LinkedHashMap<>();
        for (String probe : probes) {
            ExpressionSource source;
            try {
                source = new ExpressionSource("e", probe, true);
            }
            catch (InvalidLimitException refused) {
                continue;
            }
            read.put(probe, source.read(new ExchangeIdentityRequest(exchange), exchange.getPrincipal().block(Duration.ofSeconds(1))));
        }
        assertThat(Sensitive.calls).as("getters called through %s", read).hasValue(0);
        assertThat(read.values()).doesNotContain("leaked");
        assertThat(read.get("claims['m']['secret']")).isEqualTo("in-map");
    }

    @Test
    void anExpressionReadingAHeaderSentTwiceMakesItsDimensionAmbiguous() {
        ConfiguredIdentityResolver resolver = new ConfiguredIdentityResolver(
                List.of(new ExpressionSource("ratelimit.identity.api-key.expression",
                        "headers['X-API-Key'] ?: query['key']", false)),
                List.of(new ExpressionSource("ratelimit.identity.user.expression", "headers['X-User']", false)),
                List.of(IdentitySource.header("X-Tenant")), null, null, null);
        CallerIdentity caller = resolver.resolve(MockServerWebExchange.from(MockServerHttpRequest.get("/a")
                .header("X-API-Key", "victim", "mine").header("X-User", "u1", "u2"))).block(Duration.ofSeconds(5));
        assertThat(caller.apiKey()).as("neither of two keys counts").isNull();
        assertThat(caller.user()).isNull();
        assertThat(caller.ambiguous()).containsEntry(Dimension.API_KEY, RepeatedName.header("X-API-Key"))
                .containsEntry(Dimension.USER, RepeatedName.header("X-User"));
        CallerIdentity once = resolver.resolve(MockServerWebExchange.from(MockServerHttpRequest.get("/a?key=q")
                .header("X-API-Key", "mine"))).block(Duration.ofSeconds(5));
        assertThat(once.apiKey()).isEqualTo("mine");
        assertThat(once.ambiguous()).isEmpty();
    }

    @Test
    void anExpressionReadingAQueryParameterSentTwiceMakesItsDimensionAmbiguous() {
        // ?client=victim&client=me: the limiter would count the first, an upstream reading the last would serve "me"
        ConfiguredIdentityResolver resolver = new ConfiguredIdentityResolver(
                List.of(new ExpressionSource("ratelimit.identity.api-key.expression",
                        "query['client'] ?: headers['X-API-Key']", false)),
                List.of(new ExpressionSource("ratelimit.identity.user.expression",
                        "query['u' + 'ser'] ?: 'anonymous'", false)),
                List.of(new ExpressionSource("ratelimit.identity.tenant.expression", "cookies['org']", false)),
                null, null, null);
        CallerIdentity caller = resolver.resolve(MockServerWebExchange.from(MockServerHttpRequest
                .get("/a?client=victim&client=me&user=a&user=b").header("X-API-Key", "fallback")
                .cookie(new HttpCookie("org", "first"), new HttpCookie("org", "second"))))
                .block(Duration.ofSeconds(5));
        assertThat(caller.apiKey()).as("no later source is tried either").isNull();
        assertThat(caller.ambiguous()).isEqualTo(Map.of(Dimension.API_KEY, RepeatedName.query("client")));
        assertThat(caller.user()).as("a computed name sent twice reads as absent").isEqualTo("anonymous");
        assertThat(caller.tenant()).as("a cookie sent twice is the first, as browsers and servers do").isEqualTo("first");
        CallerIdentity valueless = resolver.resolve(MockServerWebExchange.from(MockServerHttpRequest
                .get("/a?client&client=me"))).block(Duration.ofSeconds(5));
        assertThat(valueless.ambiguous()).as("a name without a value counts too")
                .isEqualTo(Map.of(Dimension.API_KEY, RepeatedName.query("client")));
        CallerIdentity once = resolver.resolve(MockServerWebExchange.from(MockServerHttpRequest
                .get("/a?client=me&other=x&other=y"))).block(Duration.ofSeconds(5));
        assertThat(once.apiKey()).isEqualTo("me");
        assertThat(once.ambiguous()).as("a parameter no source reads may repeat").isEmpty();
    }

    @Test
    void anObjectValuedClaimIsNoIdentityReadAsAClaimOrByAnExpression() {
        ConfiguredIdentityResolver resolver = new ConfiguredIdentityResolver(
                List.of(new ClaimSource("org"), new ExpressionSource("ratelimit.identity.api-key.expression",
                        "claims['org']", true), IdentitySource.header("X-API-Key")),
                List.of(new ExpressionSource("ratelimit.identity.user.expression", "claims['org']['id']", true)),
                List.of(new ClaimSource("tenants")), null, null, null);
        CallerIdentity caller = resolver.resolve(withToken(MockServerHttpRequest.get("/a").header("X-API-Key", "k1"),
                Map.of("org", Map.of("id", "acme", "name", "Acme"), "tenants", List.of("t1", "t2"))))
                .block(Duration.ofSeconds(5));
        assertThat(caller.apiKey()).as("the object claim is skipped, the next source gives the key").isEqualTo("k1");
        assertThat(caller.user()).as("a string inside it still reads").isEqualTo("acme");
        assertThat(caller.tenant()).as("a list stays as Spring converts it").isEqualTo("[t1, t2]");
    }

    @Test
    void aKeyResolverThatFailsOrAnswersTheEmptyKeyGivesNoKeyButKeepsTheOtherDimensions() {
        List<IdentitySource> tenant = List.of(IdentitySource.header("X-Tenant"));
        ServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/a")
                .header("X-Tenant", "t1"));
        for (org.springframework.cloud.gateway.filter.ratelimit.KeyResolver resolver : List.<org.springframework
                .cloud.gateway.filter.ratelimit.KeyResolver>of(e -> Mono.just(ConfiguredIdentityResolver.EMPTY_KEY),
                        e -> Mono.just("  "), e -> Mono.empty())) {
            CallerIdentity caller = new ConfiguredIdentityResolver(List.of(), List.of(), tenant, null, resolver, "k")
                    .resolve(exchange).block(Duration.ofSeconds(5));
            assertThat(caller.apiKey()).isNull();
            assertThat(caller.tenant()).isEqualTo("t1");
        }
    }

    @Test
    void aTypoLikeUnknownPropertyIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> new ExpressionSource("ratelimit.identity.user.expression", "header['x']", true))
                .isInstanceOf(InvalidLimitException.class).hasMessageContaining("ratelimit.identity.user.expression");
    }

    private static ServerWebExchange withToken(MockServerHttpRequest.BaseBuilder<?> request,
            Map<String, Object> claims) {
        Jwt jwt = Jwt.withTokenValue("token").header("alg", "HS256").subject("alice").claims(all -> all.putAll(claims))
                .build();
        return MockServerWebExchange.from(request).mutate().principal(Mono.just(new JwtAuthenticationToken(jwt)))
                .build();
    }
}
