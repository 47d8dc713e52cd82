package dev.ratelimiter.autoconfigure.mvc;

import java.util.List;

import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.autoconfigure.security.OperatorEndpointExposure;
import dev.ratelimiter.core.InvalidLimitException;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.IncludeExcludeEndpointFilter;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Where the operator endpoints or the rules API leave loopback they are authenticated by the limiter's own filter
 * ({@link OperatorSecurityServletFilter}), as on WebFlux. Only when that filter is switched off
 * ({@code ratelimit.management.security.enabled=false}) on an address more than this host can reach, and the
 * application has no Spring Security chain of its own that could protect them (a {@code SecurityFilterChain} bean:
 * the starter brings Spring Security's classes, so their presence says nothing), anyone reaching the port could
 * write rules and throw the kill switch; that configuration fails the start-up instead, with the ways out. A bean of
 * its own ({@link RateLimitMvcOperatorExposureAutoConfiguration}), so that replacing any other of the limiter's beans
 * cannot take the refusal with it; checked once the singletons are made, before the server takes a request, and never
 * made lazily (a {@link SmartInitializingSingleton} escapes {@code spring.main.lazy-initialization}).
 */
final class UnauthenticatedOperatorEndpoints implements SmartInitializingSingleton {

    private static final List<EndpointId> OPERATOR_ENDPOINTS = List.of(EndpointId.of("ratelimit"),
            EndpointId.of("ratelimitcontrol"));

    static final String SERVLET_SECURITY = "org.springframework.security.web.SecurityFilterChain";

    private final Environment environment;

    private final @Nullable ClassLoader classLoader;

    private final ListableBeanFactory beans;

    UnauthenticatedOperatorEndpoints(Environment environment, @Nullable ClassLoader classLoader,
            ListableBeanFactory beans) {
        this.environment = environment;
        this.classLoader = classLoader;
        this.beans = beans;
    }

    @Override
    public void afterSingletonsInstantiated() {
        try {
            refuse(environment, applicationSecurity());
        }
        catch (InvalidLimitException ex) {
            // as a refusal in a bean's factory method reads: the setting's message is the root cause
            throw new BeanInitializationException("The operator endpoints would be unauthenticated", ex);
        }
    }

    /** Whether the application has a Spring Security chain of its own that could protect the endpoints. */
    private boolean applicationSecurity() {
        return ClassUtils.isPresent(SERVLET_SECURITY, classLoader) && beans.getBeanNamesForType(
                ClassUtils.resolveClassName(SERVLET_SECURITY, classLoader), true, false).length > 0;
    }

    private static void refuse(Environment environment, boolean applicationSecurity) {
        OperatorEndpointExposure exposure = OperatorEndpointExposure.of(environment);
        if (exposure.secured() || !switchedOffBeyondLoopback(environment, exposure) || applicationSecurity) {
            return;
        }
        boolean operatorEndpointsExposed = exposedOnTheWeb(environment);
        if (!operatorEndpointsExposed && RulesApiOperations.served(environment)) {
            throw new InvalidLimitException("ratelimit.rules-api.enabled", "The rate limiter's rules API, which can "
                    + "change every limit, is served on " + exposure.describe() + " with "
                    + "ratelimit.management.security.enabled=false and no Spring Security chain of the "
                    + "application's own (a SecurityFilterChain bean) to protect it: anyone reaching that port "
                    + "could change the limits or switch them off. Remove that setting (the limiter then asks for the "
                    + "operator accounts), bind it to loopback (management.server.address=127.0.0.1), or protect it "
                    + "with your own Spring Security configuration.");
        }
        if (operatorEndpointsExposed) {
            throw new InvalidLimitException("management.endpoints.web.exposure.include", "The rate limiter's "
                    + "operator endpoints (ratelimit, ratelimitcontrol), which can change every limit, are exposed on "
                    + exposure.describe() + " with ratelimit.management.security.enabled=false and no Spring "
                    + "Security chain of the application's own (a SecurityFilterChain bean) to protect them: anyone "
                    + "reaching that port could change the limits or switch them off. Remove that setting (the "
                    + "limiter then asks for the operator accounts), bind them to loopback "
                    + "(management.server.address=127.0.0.1 with a management.server.port), or protect them with your "
                    + "own Spring Security configuration.");
        }
    }

    /**
     * Whether either operator endpoint is exposed on the web as the actuator itself decides it, with its own filter:
     * ids in any case and with dashes ({@code rate-limit-control}), {@code *}, the exclusions and the defaults.
     */
    private static boolean exposedOnTheWeb(Environment environment) {
        IncludeExcludeEndpointFilter<ExposableWebEndpoint> exposure = new IncludeExcludeEndpointFilter<>(
                ExposableWebEndpoint.class, environment, "management.endpoints.web.exposure",
                EndpointExposure.WEB.getDefaultIncludes());
        return OPERATOR_ENDPOINTS.stream().anyMatch(exposure::match);
    }

    /** Switched off explicitly on an address that is not loopback for certain (WebFlux's own rule would secure it). */
    private static boolean switchedOffBeyondLoopback(Environment environment, OperatorEndpointExposure exposure) {
        Boolean enabled = environment.getProperty("ratelimit.management.security.enabled", Boolean.class);
        return Boolean.FALSE.equals(enabled) && !OperatorEndpointExposure.isLoopback(exposure.address());
    }
}
