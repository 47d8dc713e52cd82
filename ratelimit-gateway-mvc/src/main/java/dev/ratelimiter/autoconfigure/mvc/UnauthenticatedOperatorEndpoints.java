package dev.ratelimiter.autoconfigure.mvc;

import java.util.List;
import java.util.Set;

import dev.ratelimiter.autoconfigure.OperatorEndpointExposure;
import dev.ratelimiter.autoconfigure.RulesApiOperations;
import dev.ratelimiter.core.InvalidLimitException;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Where the operator endpoints or the rules API leave loopback they are authenticated by the limiter's own filter
 * ({@link OperatorServletFilter}), as on WebFlux. Only when that filter is switched off
 * ({@code ratelimit.management.security.enabled=false}) on an address more than this host can reach, and the
 * application has no Spring Security of its own that could protect them, anyone reaching the port could write rules
 * and throw the kill switch; that configuration fails the start-up instead, with the ways out.
 */
final class UnauthenticatedOperatorEndpoints {

    private static final Set<String> OPERATOR_ENDPOINTS = Set.of("ratelimit", "ratelimitcontrol");

    static final String SERVLET_SECURITY = "org.springframework.security.web.SecurityFilterChain";

    private UnauthenticatedOperatorEndpoints() {
    }

    static void refuse(Environment environment, @Nullable ClassLoader classLoader) {
        OperatorEndpointExposure exposure = OperatorEndpointExposure.of(environment);
        if (exposure.secured() || !switchedOffBeyondLoopback(environment, exposure)
                || ClassUtils.isPresent(SERVLET_SECURITY, classLoader)) {
            return;
        }
        List<String> exposed = Binder.get(environment)
                .bind("management.endpoints.web.exposure.include", Bindable.listOf(String.class)).orElse(List.of());
        boolean operatorEndpointsExposed = exposed.stream().map(String::trim)
                .anyMatch(id -> id.equals("*") || OPERATOR_ENDPOINTS.contains(id));
        if (!operatorEndpointsExposed && RulesApiOperations.served(environment)) {
            throw new InvalidLimitException("ratelimit.rules-api.enabled", "The rate limiter's rules API, which can "
                    + "change every limit, is served on " + exposure.describe() + " with "
                    + "ratelimit.management.security.enabled=false and no Spring Security on the classpath to "
                    + "protect it: anyone reaching that port could change the limits or switch them off. Remove "
                    + "that setting (the limiter then asks for the operator accounts), bind it to loopback "
                    + "(management.server.address=127.0.0.1), or protect it with your own Spring Security "
                    + "configuration.");
        }
        if (operatorEndpointsExposed) {
            throw new InvalidLimitException("management.endpoints.web.exposure.include", "The rate limiter's "
                    + "operator endpoints (ratelimit, ratelimitcontrol), which can change every limit, are exposed on "
                    + exposure.describe() + " with ratelimit.management.security.enabled=false and no Spring "
                    + "Security on the classpath to protect them: anyone reaching that port could change the limits "
                    + "or switch them off. Remove that setting (the limiter then asks for the operator accounts), "
                    + "bind them to loopback (management.server.address=127.0.0.1 with a management.server.port), "
                    + "or protect them with your own Spring Security configuration.");
        }
    }

    /** Switched off explicitly on an address that is not loopback for certain (WebFlux's own rule would secure it). */
    private static boolean switchedOffBeyondLoopback(Environment environment, OperatorEndpointExposure exposure) {
        Boolean enabled = environment.getProperty("ratelimit.management.security.enabled", Boolean.class);
        return Boolean.FALSE.equals(enabled) && !OperatorEndpointExposure.isLoopback(exposure.address());
    }
}
