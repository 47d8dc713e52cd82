package dev.ratelimiter.autoconfigure.mvc;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.autoconfigure.OperatorSecurityProperties;
import dev.ratelimiter.autoconfigure.security.CountingOperatorAccounts;
import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextImpl;
import org.springframework.security.crypto.bcrypt.BCryptPasswordEncoder;
import org.springframework.security.web.context.RequestAttributeSecurityContextRepository;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

/**
 * The servlet operator chain against what the issue-34 review found: a public read with any {@code Authorization}
 * header is answered unhashed (as before the chain), and an authentication an application's chain left in Spring
 * Security's shared request attribute is never an operator's.
 */
class OperatorSecurityServletFilterTest {

    private final AtomicInteger checks = new AtomicInteger();

    private final OperatorSecurityServletFilter filter = filter();

    private OperatorSecurityServletFilter filter() {
        OperatorSecurityProperties properties = new OperatorSecurityProperties();
        properties.getAdmin().setUsername("admin");
        properties.getAdmin().setPassword("{bcrypt}" + new BCryptPasswordEncoder(4).encode("admin-password-1"));
        properties.getViewer().setUsername("viewer");
        properties.getViewer().setPassword("{bcrypt}" + new BCryptPasswordEncoder(4).encode("viewer-password-1"));
        OperatorAccounts accounts = CountingOperatorAccounts.of(properties, checks);
        PathMappedEndpoints endpoints = mock(PathMappedEndpoints.class);
        given(endpoints.getBasePath()).willReturn("/actuator");
        given(endpoints.getAllPaths()).willReturn(List.of("/actuator/health", "/actuator/env", "/actuator/ratelimit"));
        given(endpoints.getPath(any())).willAnswer(call -> {
            EndpointId id = call.getArgument(0);
            return List.of("health", "env", "ratelimit").contains(id.toString()) ? "/actuator/" + id : null;
        });
        return OperatorSecurityServletFilter.of(accounts, new OperatorPaths(endpoints, List.of("health"),
                List.of("ratelimit"), false, null));
    }

    private MockHttpServletResponse get(String path, String authorization) throws Exception {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", path);
        request.setServletPath(path);
        if (authorization != null) {
            request.addHeader("Authorization", authorization);
        }
        MockHttpServletResponse response = new MockHttpServletResponse();
        filter.doFilter(request, response, new MockFilterChain());
        return response;
    }

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aPublicReadWithAnyBasicHeaderIsAnsweredWithoutHashing() throws Exception {
        assertThat(get("/actuator/health", null).getStatus()).isEqualTo(200);
        assertThat(checks.get()).isZero();
        MockHttpServletResponse stale = get("/actuator/health", basic("prober", "stale-or-random"));
        int hashed = checks.getAndSet(0);
        assertThat(hashed).as("bcrypt checks an anonymous caller triggers on a public endpoint").isZero();
        assertThat(stale.getStatus()).as("a probe with stale credentials, 200 on main").isEqualTo(200);
    }

    /**
     * An application whose own chain runs first (spring.security.filter.order=-200) and maps its IdP's roles with
     * the ROLE_ prefix (a Keycloak-style JwtGrantedAuthoritiesConverter) leaves its authentication in the request
     * attribute Spring Security shares by default; the operator chain loads it as its own.
     */
    @Test
    void anAuthenticationAnEarlierChainLeftInTheSharedAttributeIsNotAnOperator() throws Exception {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/actuator/env");
        request.setServletPath("/actuator/env");
        SecurityContext earlier =
                new SecurityContextImpl(
                        UsernamePasswordAuthenticationToken.authenticated(
                                "some-idp-user", null, AuthorityUtils
                                        .createAuthorityList("ROLE_RATELIMIT_ADMIN")));
        new RequestAttributeSecurityContextRepository()
                .saveContext(earlier, request, new MockHttpServletResponse());
        MockHttpServletResponse response = new MockHttpServletResponse();
        MockFilterChain chain = new MockFilterChain();
        filter.doFilter(request, response, chain);
        assertThat(chain.getRequest()).as("reached the endpoint with no operator credentials, status "
                + response.getStatus()).isNull();
        assertThat(response.getStatus()).isEqualTo(401);
        assertThat(checks.get()).isZero();
    }
}
