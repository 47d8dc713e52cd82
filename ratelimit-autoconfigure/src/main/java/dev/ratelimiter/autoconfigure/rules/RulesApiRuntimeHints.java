package dev.ratelimiter.autoconfigure.rules;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/** The rules API's OpenAPI document, which it serves as read from the classpath ({@link RulesApiRoutes#OPENAPI}). */
public final class RulesApiRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern(RulesApiRoutes.OPENAPI);
    }
}
