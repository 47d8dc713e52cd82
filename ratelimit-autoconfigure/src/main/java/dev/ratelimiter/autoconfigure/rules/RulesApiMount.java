package dev.ratelimiter.autoconfigure.rules;

import dev.ratelimiter.autoconfigure.RulesApiProperties;
import dev.ratelimiter.core.InvalidLimitException;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Where the rules API is served, decided once from the environment for both the routes and the filter that guards
 * them. With a management port of its own, at {@code ratelimit.rules-api.path} on that port (its own context: the
 * gateway's routes never see it, and it never sees the gateway's clients). Without one, the application's port is
 * the gateway's public port: there the API is served only when {@code ratelimit.rules-api.enabled=true} says so, and
 * then below the actuator's base path, beside the endpoints and their authentication, where no route of a gateway
 * goes ({@code /actuator/v1/rules}).
 *
 * @param path the path of the rule collection in the context that serves it
 */
public record RulesApiMount(String path) {

    public static final String PREFIX = "ratelimit.rules-api";

    /** Where the API is served in the context that serves the actuator, or null when it is not served. */
    public static @Nullable RulesApiMount of(Environment environment) {
        Binder binder = Binder.get(environment);
        if (!binder.bind("ratelimit.enabled", Boolean.class).orElse(true)) {
            return null;
        }
        RulesApiProperties properties = binder.bind(PREFIX, RulesApiProperties.class).orElseGet(RulesApiProperties::new);
        Boolean enabled = properties.getEnabled();
        String path = normalized(properties.getPath());
        if (path.isEmpty() || !path.matches("[A-Za-z0-9._~/-]+")) {
            throw new InvalidLimitException(PREFIX + ".path", PREFIX + ".path is '" + properties.getPath()
                    + "': give a path below the root of letters, digits, '/', '.', '_', '~' or '-' (/v1/rules).");
        }
        return switch (ManagementPortType.get(environment)) {
            case DIFFERENT -> Boolean.FALSE.equals(enabled) ? null : new RulesApiMount(path);
            case SAME -> Boolean.TRUE.equals(enabled) ? new RulesApiMount(
                    normalized(environment.getProperty("management.endpoints.web.base-path", "/actuator")) + path)
                    : null;
            case DISABLED -> null;
        };
    }

    /** {@code v1/rules/} as {@code /v1/rules}; the root as the empty string. */
    private static String normalized(String path) {
        String trimmed = path.trim();
        while (trimmed.endsWith("/")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        return trimmed.isEmpty() || trimmed.startsWith("/") ? trimmed : "/" + trimmed;
    }

    /**
     * Where the usage API is served beside the rules API: the collection's last segment replaced by {@code usage}
     * ({@code /v1/rules} → {@code /v1/usage}, {@code /actuator/v1/rules} → {@code /actuator/v1/usage}), so that it is
     * served, authenticated and read-only for viewers wherever the rules API is, without a setting of its own.
     */
    public static String usagePath(String rulesPath) {
        int slash = rulesPath.lastIndexOf('/');
        return (slash < 0 ? "" : rulesPath.substring(0, slash)) + "/usage";
    }

    /** {@link #usagePath(String)} of this mount. */
    public String usagePath() {
        return usagePath(path);
    }

    /** The path patterns of the API: the collection and everything below it. */
    public String[] patterns() {
        return new String[] { path, path + "/**" };
    }

    /** {@link #patterns()} and the usage API's path ({@link #usagePath()}). */
    public String[] patternsWithUsage() {
        return new String[] { path, path + "/**", usagePath() };
    }
}
