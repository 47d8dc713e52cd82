package dev.ratelimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.http.HttpMethod;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.web.server.WebFilterChainProxy;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.savedrequest.NoOpServerRequestCache;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

/**
 * HTTP Basic in front of the actuator endpoints, stateless (no session, no saved request, no login page: the
 * clients are curl and scripts): the public endpoints' reads for anyone, every other read for the viewer and the
 * admin, and everything else - the writes that change limits and switches - for the admin only.
 */
final class OperatorSecurityFilter {

    private OperatorSecurityFilter() {
    }

    /**
     * @param wholePort whether the filter guards a port that serves only the endpoints (then every request on it
     * is checked, including paths no endpoint claims) or the application's port (then only the endpoints' paths)
     */
    static WebFilter of(OperatorAccounts accounts, PathMappedEndpoints endpoints, List<String> publicEndpoints,
            boolean wholePort) {
        List<String> publicPaths = new ArrayList<>();
        for (String id : publicEndpoints) {
            String path = endpoints.getPath(EndpointId.of(id.trim()));
            if (path != null) {
                publicPaths.add(path);
                publicPaths.add(path + "/**");
            }
        }
        String viewer = OperatorAccounts.Role.VIEWER.roleName();
        String admin = OperatorAccounts.Role.ADMIN.roleName();
        ServerHttpSecurity http = ServerHttpSecurity.http()
                .securityMatcher(wholePort ? ServerWebExchangeMatchers.anyExchange() : endpointPaths(endpoints))
                .authenticationManager(authenticate(accounts))
                .httpBasic(Customizer.withDefaults())
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                // no cookies, no sessions: a forged cross-site request carries no Basic credentials of its own
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .requestCache(cache -> cache.requestCache(NoOpServerRequestCache.getInstance()))
                .securityContextRepository(NoOpServerSecurityContextRepository.getInstance())
                .authorizeExchange(exchanges -> {
                    if (!publicPaths.isEmpty()) {
                        exchanges.pathMatchers(HttpMethod.GET, publicPaths.toArray(String[]::new)).permitAll();
                        exchanges.pathMatchers(HttpMethod.HEAD, publicPaths.toArray(String[]::new)).permitAll();
                    }
                    exchanges.pathMatchers(HttpMethod.GET, "/**").hasAnyRole(viewer, admin);
                    exchanges.pathMatchers(HttpMethod.HEAD, "/**").hasAnyRole(viewer, admin);
                    exchanges.anyExchange().hasRole(admin);
                });
        return new WebFilterChainProxy(http.build());
    }

    /** Every endpoint's path and what lies below it, and the discovery page at the base path. */
    private static ServerWebExchangeMatcher endpointPaths(PathMappedEndpoints endpoints) {
        List<String> patterns = new ArrayList<>();
        String base = endpoints.getBasePath();
        if (!base.isEmpty() && !base.equals("/")) {
            patterns.add(base);
            patterns.add(base + "/**");
        }
        for (String path : endpoints.getAllPaths()) {
            patterns.add(path);
            patterns.add(path + "/**");
        }
        return ServerWebExchangeMatchers.pathMatchers(patterns.toArray(String[]::new));
    }

    private static ReactiveAuthenticationManager authenticate(OperatorAccounts accounts) {
        return authentication -> {
            OperatorAccounts.Role role = accounts.verify(authentication.getName(),
                    String.valueOf(authentication.getCredentials()));
            if (role == null) {
                return Mono.error(new BadCredentialsException("Bad credentials"));
            }
            return Mono.just(UsernamePasswordAuthenticationToken.authenticated(authentication.getName(), null,
                    AuthorityUtils.createAuthorityList("ROLE_" + role.roleName())));
        };
    }
}
