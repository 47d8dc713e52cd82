package dev.ratelimiter.scenarios;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

import dev.ratelimiter.scenarios.Gateways.Mode;

/**
 * Which Spring Cloud Gateway the run drives: the WebFlux sample ({@code sample-gateway}) or its Server MVC twin
 * ({@code sample-gateway-mvc}). Both get the same arguments; what the MVC flavour cannot run is refused by name
 * before anything starts, never played half-way.
 */
enum Flavour {

    WEBFLUX("WebFlux", "sample-gateway", "scenarios.gateway.jar", "demo-login"),
    MVC("Server MVC", "sample-gateway-mvc", "scenarios.gateway-mvc.jar", "login");

    /** For the report. */
    final String label;
    /** The sample's module, whose {@code target} holds its fat jar. */
    final String module;
    /** The system property giving the jar's path instead; the environment variable is its upper-case twin. */
    final String jarProperty;
    /** The sample's {@code /login/**} route, which the runner's per-route cap matches. */
    final String loginRouteId;

    Flavour(String label, String module, String jarProperty, String loginRouteId) {
        this.label = label;
        this.module = module;
        this.jarProperty = jarProperty;
        this.loginRouteId = loginRouteId;
    }

    /** {@code webflux} or {@code mvc}. */
    static Flavour of(String name) {
        for (Flavour flavour : values()) {
            if (flavour.name().equalsIgnoreCase(name.trim())) {
                return flavour;
            }
        }
        throw new IllegalArgumentException("--flavour=" + name + ": one of webflux, mvc");
    }

    String jarEnvironmentVariable() {
        return jarProperty.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    /** The side by side's limiters this flavour runs when none are named. */
    List<Mode> defaultLimiters() {
        return this == MVC ? List.of(Mode.OFF, Mode.EXACT, Mode.LOCAL) : List.of(Mode.values());
    }

    /** Whether the run's default selection includes the regions scenario. */
    boolean runsRegionsByDefault() {
        return this == WEBFLUX;
    }

    /** Why this flavour cannot run {@code scenario} (a story, {@code regions} or {@code side-by-side}), if it cannot. */
    Optional<String> unsupported(String scenario) {
        if (this == MVC && RegionsScenario.NAME.equals(scenario)) {
            return Optional.of("scenario regions is WebFlux only: its global limit's usage and shares travel over "
                    + "Kafka, and the MVC starter (so sample-gateway-mvc) has no Kafka client");
        }
        return Optional.empty();
    }

    /** Why this flavour cannot run {@code mode}'s gateways in the side by side, if it cannot. */
    Optional<String> unsupported(Mode mode) {
        if (this == MVC && mode == Mode.SCG) {
            return Optional.of("scenario side-by-side, limiter scg is WebFlux only: Spring Cloud Gateway's "
                    + "RequestRateLimiter with RedisRateLimiter and a KeyResolver bean has no Server MVC counterpart "
                    + "(MVC's only limiter is Bucket4j's filter); run --limiters=off,exact,local");
        }
        return Optional.empty();
    }
}
