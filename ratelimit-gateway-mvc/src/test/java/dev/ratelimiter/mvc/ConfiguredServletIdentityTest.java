package dev.ratelimiter.mvc;

import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.ClaimSource;
import dev.ratelimiter.gateway.ExpressionSource;
import dev.ratelimiter.gateway.IdentityOrigin;
import dev.ratelimiter.gateway.IdentitySource;
import dev.ratelimiter.gateway.IdentitySources;
import dev.ratelimiter.gateway.RepeatedName;
import jakarta.servlet.http.Cookie;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationToken;
import org.springframework.web.servlet.function.ServerRequest;

import static org.assertj.core.api.Assertions.assertThat;

/** The configured sources read from a servlet request: what the expression root and the principal are there. */
class ConfiguredServletIdentityTest {

    private static ServletIdentityResolver resolver(String tenantExpression) {
        return ServletIdentityResolver.of(new IdentitySources(
                List.of(new ClaimSource("azp"), IdentitySource.header("X-API-Key")),
                List.of(IdentitySource.principal()),
                List.of(new ExpressionSource("e", tenantExpression, true)), new ClaimSource("plan")));
    }

    private static ServerRequest request(MockHttpServletRequest servlet) {
        return ServerRequest.create(servlet, List.of());
    }

    @Test
    void aJwtGivesThePrincipalTheClaimsAndTheTrustedTier() {
        MockHttpServletRequest servlet = new MockHttpServletRequest("GET", "/api/x");
        Jwt jwt = Jwt.withTokenValue("t").header("alg", "HS256").subject("alice")
                .claims(claims -> claims.putAll(Map.of("azp", "client-a", "plan", "pro", "tenant_id", "t1"))).build();
        servlet.setUserPrincipal(new JwtAuthenticationToken(jwt));
        servlet.addHeader("X-API-Key", "from-the-client");
        CallerIdentity caller = resolver("claims['tenant_id']").resolve(request(servlet), "api");
        assertThat(caller).isEqualTo(new CallerIdentity("client-a", "alice", "t1", "pro", Map.of(),
                Map.of(Dimension.API_KEY, IdentityOrigin.CLAIM, Dimension.USER, IdentityOrigin.PRINCIPAL,
                        Dimension.TENANT, IdentityOrigin.TOKEN_EXPRESSION, Dimension.TIER, IdentityOrigin.CLAIM)));
    }

    @Test
    void anAnonymousCallerIsNobodyAndTheHeaderFallbackCounts() {
        MockHttpServletRequest servlet = new MockHttpServletRequest("GET", "/api/x");
        servlet.setUserPrincipal(new AnonymousAuthenticationToken("k", "anonymousUser",
                AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS")));
        servlet.addHeader("X-API-Key", "header-key");
        CallerIdentity caller = resolver("principal").resolve(request(servlet), "api");
        assertThat(caller).as("the header beside a token source: nobody vouched for it").isEqualTo(
                new CallerIdentity("header-key", null, null, null, Map.of(),
                        Map.of(Dimension.API_KEY, IdentityOrigin.UNVOUCHED)));
    }

    @Test
    void theExpressionSeesTheQueryDecodedCookiesPathMethodAndRouteButNoFormField() {
        MockHttpServletRequest servlet = new MockHttpServletRequest("POST", "/api/x");
        servlet.setQueryString("org=a%20b+c&flag&other=1&other=2");
        servlet.setCookies(new Cookie("session", "s1"));
        servlet.setContentType("application/x-www-form-urlencoded");
        servlet.addParameter("form", "from-the-body");
        assertThat(tenant("query['org'] + '|' + cookies['session'] + '|' + path + '|' + method + '|' + route",
                servlet)).isEqualTo("a b c|s1|/api/x|POST|api");
        assertThat(tenant("query['flag'] ?: 'none'", servlet)).isEqualTo("none");
        assertThat(tenant("query['form'] ?: 'none'", servlet)).isEqualTo("none");
        assertThat(tenant("cookies['other'] ?: 'none'", servlet)).isEqualTo("none");
    }

    @Test
    void aHeaderTheExpressionNamesSentTwiceIsAmbiguous() {
        MockHttpServletRequest servlet = new MockHttpServletRequest("GET", "/api/x");
        servlet.addHeader("X-Org", "one");
        servlet.addHeader("X-Org", "two");
        CallerIdentity caller = resolver("headers['X-Org']").resolve(request(servlet), "api");
        assertThat(caller.tenant()).isNull();
        assertThat(caller.ambiguous()).isEqualTo(Map.of(Dimension.TENANT, RepeatedName.header("X-Org")));
    }

    @Test
    void aQueryParameterTheExpressionNamesSentTwiceIsAmbiguousCountedAsWebFluxCountsIt() {
        MockHttpServletRequest servlet = new MockHttpServletRequest("GET", "/api/x");
        servlet.setQueryString("org=victim&o%72g=me");
        CallerIdentity caller = resolver("query['org'] ?: headers['X-Org']").resolve(request(servlet), "api");
        assertThat(caller.tenant()).isNull();
        assertThat(caller.ambiguous()).isEqualTo(Map.of(Dimension.TENANT, RepeatedName.query("org")));
        servlet.setQueryString("org&org=me");
        assertThat(resolver("query['org']").resolve(request(servlet), "api").ambiguous())
                .isEqualTo(Map.of(Dimension.TENANT, RepeatedName.query("org")));
        servlet.setQueryString("org=me&other&other");
        assertThat(tenant("query['org']", servlet)).isEqualTo("me");
        servlet.setQueryString("a=1&org=first&org=second");
        assertThat(tenant("query['o' + 'rg'] ?: 'absent'", servlet)).as("a computed name sent twice reads as absent")
                .isEqualTo("absent");
        servlet.setCookies(new Cookie("session", "s1"), new Cookie("session", "s2"));
        assertThat(tenant("cookies['session']", servlet)).as("the first cookie, as servers read it").isEqualTo("s1");
    }

    private static String tenant(String expression, MockHttpServletRequest servlet) {
        return resolver(expression).resolve(request(servlet), "api").tenant();
    }
}
