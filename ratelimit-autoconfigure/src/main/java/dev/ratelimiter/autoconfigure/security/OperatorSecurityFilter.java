package dev.ratelimiter.autoconfigure.security;

import java.util.List;

import dev.ratelimiter.autoconfigure.OperatorSecurityProperties;
import dev.ratelimiter.autoconfigure.rules.RulesApiMount;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.http.HttpMethod;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.WebFilterChainProxy;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.savedrequest.NoOpServerRequestCache;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * HTTP Basic in front of the actuator endpoints on WebFlux, stateless (no session, no saved request, no login page:
 * the clients are curl and scripts): the shared table of who may do what ({@link OperatorAccessRules}) as path
 * patterns, over the shared accounts ({@link OperatorAuthentication}).
 */
public final class OperatorSecurityFilter {

    private OperatorSecurityFilter() {
    }

    /**
     * @param wholePort whether the filter guards a port that serves only the endpoints (then every request on it
     * is checked, including paths no endpoint claims) or the application's port (then only the exposed endpoints'
     * paths, and nothing else enters Spring Security)
     * @param rulesApi the rules API's collection path ({@link RulesApiMount#path()}), null when it is not served:
     * its reads for the viewer and the admin, its writes for the admin, like the endpoints'
     */
    public static WebFilter of(OperatorAccounts accounts, PathMappedEndpoints endpoints,
            OperatorSecurityProperties settings, boolean wholePort, @Nullable String rulesApi) {
        OperatorAccessRules rules = OperatorAccessRules.of(endpoints, settings.getPublicEndpoints(),
                settings.getViewerEndpoints(), rulesApi);
        String[] publicPaths = OperatorAccessRules.patterns(rules.publicPaths());
        String[] viewerPaths = OperatorAccessRules.patterns(rules.viewerPaths());
        String viewer = OperatorAuthentication.authority(OperatorAccounts.Role.VIEWER);
        String admin = OperatorAuthentication.authority(OperatorAccounts.Role.ADMIN);
        ServerWebExchangeMatcher scope = wholePort ? ServerWebExchangeMatchers.anyExchange()
                : ServerWebExchangeMatchers.pathMatchers(OperatorRequests.endpointPatterns(endpoints,
                        rulesApi != null ? OperatorAccessRules.patterns(List.of(rulesApi, RulesApiMount.usagePath(rulesApi)))
                                : new String[0]));
        ServerHttpSecurity http = ServerHttpSecurity.http()
                .securityMatcher(scope)
                .authenticationManager(authenticate(accounts))
                .httpBasic(Customizer.withDefaults())
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                // no session and no cookie to ride on; a browser that cached Basic credentials still cannot forge a
                // write: the endpoints take JSON only (anything a form can send is 415) and CORS is not open
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .requestCache(cache -> cache.requestCache(NoOpServerRequestCache.getInstance()))
                .securityContextRepository(NoOpServerSecurityContextRepository.getInstance())
                .authorizeExchange(exchanges -> {
                    for (HttpMethod read : new HttpMethod[] { HttpMethod.GET, HttpMethod.HEAD }) {
                        if (publicPaths.length > 0) {
                            exchanges.pathMatchers(read, publicPaths).permitAll();
                        }
                        if (viewerPaths.length > 0) {
                            exchanges.pathMatchers(read, viewerPaths).hasAnyAuthority(viewer, admin);
                        }
                        if (rules.discovery() != null) {
                            exchanges.pathMatchers(read, rules.discovery()).hasAnyAuthority(viewer, admin);
                        }
                    }
                    // every write, and every read of anything else (env, heapdump, routes: they can hold secrets)
                    exchanges.anyExchange().hasAuthority(admin);
                });
        WebFilterChainProxy security = new WebFilterChainProxy(http.build());
        WebFilter chain = (exchange, next) -> {
            OperatorRequests.closeWhenRefused(exchange);
            return security.filter(exchange, next);
        };
        if (wholePort) {
            return chain;
        }
        // On the application's port the chain must not see the gateway's traffic at all: its firewall would refuse
        // paths the routes accept (";", "%2F", "//"), and every request would pay for it.
        return (exchange, next) -> scope.matches(exchange)
                .flatMap(match -> match.isMatch() ? chain.filter(exchange, next) : next.filter(exchange));
    }

    /** Off the event loop: a bcrypt hash costs tens of milliseconds of CPU per login. */
    private static ReactiveAuthenticationManager authenticate(OperatorAccounts accounts) {
        return offered -> Mono.fromCallable(() -> OperatorAuthentication.authenticate(accounts, offered))
                .subscribeOn(Schedulers.boundedElastic());
    }
}
