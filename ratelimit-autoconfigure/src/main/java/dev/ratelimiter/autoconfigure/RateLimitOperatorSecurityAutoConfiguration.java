package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.autoconfigure.security.OperatorEndpointExposure;
import dev.ratelimiter.core.InvalidLimitException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Authentication of the actuator endpoints wherever they leave loopback: the accounts, checked at start-up. The
 * filter that asks for them is {@link OperatorSecurityManagementContextConfiguration}, in the context that serves the
 * endpoints (the management port's own, when it has one). Without Spring Security on the classpath, endpoints that
 * would be exposed unauthenticated stop the start-up instead.
 */
@AutoConfiguration
@ConditionalOnClass(Endpoint.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Conditional(OnOperatorSecurityCondition.class)
@EnableConfigurationProperties(OperatorSecurityProperties.class)
public final class RateLimitOperatorSecurityAutoConfiguration {

    private static final Logger logger = LoggerFactory.getLogger(RateLimitOperatorSecurityAutoConfiguration.class);

    static final String SPRING_SECURITY = "org.springframework.security.config.web.server.ServerHttpSecurity";

    // Made at start-up even under spring.main.lazy-initialization: it is where a missing Spring Security stops the
    // start-up, and nothing else may ask for it before a request reaches the endpoints unauthenticated.
    @Bean
    @Lazy(false)
    OperatorAccounts rateLimitOperatorAccounts(OperatorSecurityProperties properties, Environment environment,
            ApplicationContext context) {
        return accounts(properties, environment, context.getClassLoader(), SPRING_SECURITY);
    }

    /**
     * The accounts of the settings, for either flavour's chain, once Spring Security's type for that flavour's chain
     * is known to be there: without it the endpoints would be open, so the start-up stops instead (fail closed).
     */
    public static OperatorAccounts accounts(OperatorSecurityProperties properties, Environment environment,
            @Nullable ClassLoader classLoader, String springSecurityType) {
        OperatorEndpointExposure exposure = OperatorEndpointExposure.of(environment);
        if (!ClassUtils.isPresent(springSecurityType, classLoader)) {
            throw new InvalidLimitException(OperatorEndpointExposure.ENABLED, "The actuator endpoints, which can "
                    + "change every limit, are served on " + exposure.describe() + " and must be authenticated, but "
                    + "Spring Security (spring-security-config and spring-security-web, which the starter brings) is "
                    + "not on the classpath. Put it back, bind management.server.address to 127.0.0.1, or set "
                    + OperatorEndpointExposure.ENABLED + "=false if nothing else can reach that port.");
        }
        return accounts(properties, exposure);
    }

    /**
     * The accounts of the settings, for either flavour's filter: a generated admin password is logged once (the only
     * way to learn it), and only the digests stay (the plain text leaves the bean the actuator can show).
     */
    private static OperatorAccounts accounts(OperatorSecurityProperties properties, OperatorEndpointExposure exposure) {
        OperatorAccounts accounts = OperatorAccounts.of(properties, password -> logger.warn("The actuator endpoints on "
                + exposure.describe() + " need authentication and ratelimit.management.security.admin.password is "
                + "not set. Using the generated password for user '" + properties.getAdmin().getUsername() + "': "
                + password + " (set the password from a secret for a stable one)"));
        properties.getAdmin().setPassword(null);
        properties.getViewer().setPassword(null);
        return accounts;
    }
}
