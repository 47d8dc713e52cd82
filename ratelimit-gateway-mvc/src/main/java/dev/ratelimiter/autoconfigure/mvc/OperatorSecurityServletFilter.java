package dev.ratelimiter.autoconfigure.mvc;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

import dev.ratelimiter.autoconfigure.security.OperatorAccessRules;
import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.autoconfigure.security.OperatorAuthentication;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.beans.factory.config.AutowireCapableBeanFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.ObjectPostProcessor;
import org.springframework.security.config.annotation.authentication.builders.AuthenticationManagerBuilder;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configurers.AbstractHttpConfigurer;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.web.AuthenticationEntryPoint;
import org.springframework.security.web.FilterChainProxy;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.core.context.DeferredSecurityContext;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.web.context.HttpRequestResponseHolder;
import org.springframework.security.web.context.RequestAttributeSecurityContextRepository;
import org.springframework.security.web.context.SecurityContextRepository;
import org.springframework.security.web.firewall.DefaultHttpFirewall;
import org.springframework.security.web.firewall.HttpStatusRequestRejectedHandler;
import org.springframework.security.web.savedrequest.NullRequestCache;

/**
 * HTTP Basic in front of the actuator endpoints and the rules API on the servlet flavour: a Spring Security
 * {@link SecurityFilterChain} over the same accounts ({@link OperatorAccounts}) and roles as the WebFlux flavour's,
 * stateless (no session, no saved request, no login page: the clients are curl and scripts), and the same table of who
 * may do what ({@link OperatorAccessRules}), read the servlet's way ({@link OperatorPaths}).
 * <p>
 * The chain is the limiter's own, never a bean: a {@code SecurityFilterChain} bean would make Spring Boot's default
 * chain back off and join an application's {@code @EnableWebSecurity} proxy. It runs in its own
 * {@link FilterChainProxy}, entered only on the operator paths ({@link OperatorPaths}), so the gateway's routes never
 * meet it (nor its firewall, which would refuse paths the routes accept), and it is built against an empty context,
 * so an application's {@code GrantedAuthorityDefaults} or role hierarchy cannot change who may do what here. The
 * authentication is kept in a request attribute of the chain's own, and copied where an application's own chain after
 * this one finds it; what an application's chain before this one left there is never read as an operator's.
 * <p>
 * A public read (health, by default) does not enter the chain at all, as before the chain: a probe's stale
 * {@code Authorization} header is not checked, so an anonymous caller cannot make the gateway hash passwords through
 * it.
 */
final class OperatorSecurityServletFilter extends OperatorPathFilter {

    static final String CHALLENGE = "Basic realm=\"Realm\"";

    private final FilterChainProxy security;

    private OperatorSecurityServletFilter(OperatorPaths paths, FilterChainProxy security) {
        super(paths);
        this.security = security;
    }

    static OperatorSecurityServletFilter of(OperatorAccounts accounts, OperatorPaths paths) {
        FilterChainProxy security = new FilterChainProxy(chain(accounts, paths));
        // The requests are placed by the container's normalised reading (OperatorPaths), the one the dispatcher
        // serves, so a raw path with ";" or "/../" is answered as that reading (401, as before), not refused as the
        // strict firewall would; encoded slashes and un-normalised servlet paths are still refused.
        security.setFirewall(new DefaultHttpFirewall());
        security.setRequestRejectedHandler(new HttpStatusRequestRejectedHandler());
        security.afterPropertiesSet();
        return new OperatorSecurityServletFilter(paths, security);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (read(request) && paths.isPublic(request)) {
            chain.doFilter(request, response);
            return;
        }
        security.doFilter(request, response, chain);
    }

    private static SecurityFilterChain chain(OperatorAccounts accounts, OperatorPaths paths) {
        String admin = OperatorAuthentication.authority(OperatorAccounts.Role.ADMIN);
        String viewer = OperatorAuthentication.authority(OperatorAccounts.Role.VIEWER);
        // empty bodies, as on WebFlux: the same answer whether the name or the password was wrong
        AuthenticationEntryPoint challenge = (request, response, failure) -> {
            response.setHeader(HttpHeaders.WWW_AUTHENTICATE, CHALLENGE);
            response.setStatus(HttpServletResponse.SC_UNAUTHORIZED);
        };
        SecurityContextRepository perRequest = new OperatorContexts();
        try {
            HttpSecurity http = http();
            return http.securityMatcher(request -> true)
                    .authenticationManager(offered -> OperatorAuthentication.authenticate(accounts, offered))
                    .httpBasic(basic -> basic.authenticationEntryPoint(challenge).securityContextRepository(perRequest))
                    .formLogin(AbstractHttpConfigurer::disable)
                    .logout(AbstractHttpConfigurer::disable)
                    // no session and no cookie to ride on; the endpoints take JSON only and CORS is not open
                    .csrf(AbstractHttpConfigurer::disable)
                    .requestCache(cache -> cache.requestCache(new NullRequestCache()))
                    .sessionManagement(session -> session.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                    .securityContext(context -> context.securityContextRepository(perRequest))
                    // the account as the request's principal and roles, which the endpoints and the rules API ask
                    .servletApi(Customizer.withDefaults())
                    .anonymous(Customizer.withDefaults())
                    .exceptionHandling(refusals -> refusals.authenticationEntryPoint(challenge)
                            .accessDeniedHandler((request, response, denied) ->
                                    response.setStatus(HttpServletResponse.SC_FORBIDDEN)))
                    .authorizeHttpRequests(requests -> requests
                            .requestMatchers(request -> read(request) && paths.isPublic(request)).permitAll()
                            .requestMatchers(request -> read(request) && paths.isForViewer(request))
                            .hasAnyAuthority(viewer, admin)
                            // every write, and every read of anything else (env, heapdump: they can hold secrets)
                            .anyRequest().hasAuthority(admin))
                    .build();
        }
        catch (Exception ex) {
            throw new IllegalStateException("The operator endpoints' security chain could not be built", ex);
        }
    }

    /**
     * Where the chain keeps a request's authentication: loaded only from an attribute of its own, so that an
     * authentication an application's chain left in Spring Security's shared attribute before this one (its users,
     * whose roles may be named like the operator's) is never taken for an operator's; saved there and to the shared
     * attribute, where an application's chain after this one finds the operator.
     */
    private static final class OperatorContexts implements SecurityContextRepository {

        private static final String OWN = OperatorSecurityServletFilter.class.getName() + ".CONTEXT";

        private final RequestAttributeSecurityContextRepository own =
                new RequestAttributeSecurityContextRepository(OWN);

        private final RequestAttributeSecurityContextRepository shared =
                new RequestAttributeSecurityContextRepository();

        @Override
        @SuppressWarnings("deprecation")
        public SecurityContext loadContext(HttpRequestResponseHolder holder) {
            return own.loadContext(holder);
        }

        @Override
        public DeferredSecurityContext loadDeferredContext(HttpServletRequest request) {
            return own.loadDeferredContext(request);
        }

        @Override
        public void saveContext(SecurityContext context, HttpServletRequest request, HttpServletResponse response) {
            own.saveContext(context, request, response);
            shared.saveContext(context, request, response);
        }

        @Override
        public boolean containsContext(HttpServletRequest request) {
            return own.containsContext(request);
        }
    }

    /** An {@link HttpSecurity} of the limiter's own, over an empty context: no bean of the application's reaches it. */
    private static HttpSecurity http() {
        GenericApplicationContext empty = new GenericApplicationContext();
        empty.refresh();
        AutowireCapableBeanFactory factory = empty.getAutowireCapableBeanFactory();
        ObjectPostProcessor<Object> initialise = new ObjectPostProcessor<>() {

            @Override
            @SuppressWarnings("unchecked")
            public <O> O postProcess(O object) {
                return (O) factory.initializeBean(object, object.getClass().getName());
            }
        };
        Map<Class<?>, Object> shared = new HashMap<>();
        shared.put(ApplicationContext.class, empty);
        return new HttpSecurity(initialise, new AuthenticationManagerBuilder(initialise), shared);
    }

    private static boolean read(HttpServletRequest request) {
        return OperatorAccessRules.read(request.getMethod());
    }
}
