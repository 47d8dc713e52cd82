package dev.ratelimiter.autoconfigure.mvc;

import java.util.List;
import java.util.Set;

import dev.ratelimiter.autoconfigure.OperatorEndpointExposure;
import dev.ratelimiter.autoconfigure.RulesApiOperations;
import dev.ratelimiter.core.InvalidLimitException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The MVC flavour cannot yet authenticate the operator endpoints (the WebFlux flavour's HTTP Basic accounts are
 * WebFlux security filters). Exposed on the web where more than this host can reach them, they would let anyone who
 * reaches the port write rules and throw the kill switch; so that configuration fails the start-up instead, with the
 * ways out. The same holds for the rules API.
 */
final class UnauthenticatedOperatorEndpoints {

    private static final Set<String> OPERATOR_ENDPOINTS = Set.of("ratelimit", "ratelimitcontrol");

    private UnauthenticatedOperatorEndpoints() {
    }

    static void refuse(Environment environment) {
        List<String> exposed = Binder.get(environment)
                .bind("management.endpoints.web.exposure.include", Bindable.listOf(String.class)).orElse(List.of());
        boolean operatorEndpointsExposed = exposed.stream().map(String::trim)
                .anyMatch(id -> id.equals("*") || OPERATOR_ENDPOINTS.contains(id));
        OperatorEndpointExposure exposure = OperatorEndpointExposure.of(environment);
        if (!operatorEndpointsExposed && RulesApiOperations.served(environment) && exposure.secured()) {
            throw new InvalidLimitException("ratelimit.rules-api.enabled", "The rate limiter's rules API is served "
                    + "on " + exposure.describe() + ", and on Spring Cloud Gateway Server MVC the limiter cannot "
                    + "authenticate it yet: anyone reaching that port could change the limits or switch them off. "
                    + "Serve it on loopback only (management.server.address=127.0.0.1), or protect it with your own "
                    + "Spring Security configuration and set ratelimit.management.security.enabled=false, or set "
                    + "ratelimit.rules-api.enabled=false.");
        }
        if (operatorEndpointsExposed && exposure.secured()) {
            throw new InvalidLimitException("management.endpoints.web.exposure.include", "The rate limiter's "
                    + "operator endpoints (ratelimit, ratelimitcontrol) are exposed on " + exposure.describe()
                    + ", and on Spring Cloud Gateway Server MVC the limiter cannot authenticate them yet: anyone "
                    + "reaching that port could change the limits or switch them off. Serve them on loopback only "
                    + "(management.server.address=127.0.0.1 with a management.server.port), or protect them with "
                    + "your own Spring Security configuration and set ratelimit.management.security.enabled=false, "
                    + "or leave them out of management.endpoints.web.exposure.include.");
        }
    }
}
