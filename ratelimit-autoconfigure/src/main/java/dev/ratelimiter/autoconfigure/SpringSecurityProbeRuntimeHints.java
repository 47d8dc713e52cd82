package dev.ratelimiter.autoconfigure;

import java.util.List;

import dev.ratelimiter.gateway.ClaimSource;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The Spring Security classes the limiter looks for by name at run time, where the optional dependency is asked for
 * rather than linked: a native image finds a class by name only when it was told of it, and would otherwise report
 * Spring Security absent where it is present.
 */
public final class SpringSecurityProbeRuntimeHints implements RuntimeHintsRegistrar {

    /** Every class name asked for at run time (the servlet flavour adds its own). */
    static final List<String> PROBED = List.of(ClaimSource.OAUTH2_CLAIMS, ClaimSource.AUTHENTICATION,
            RateLimitOperatorSecurityAutoConfiguration.SPRING_SECURITY);

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        PROBED.forEach(name -> hints.reflection().registerTypeIfPresent(classLoader, name, type -> {
        }));
    }
}
