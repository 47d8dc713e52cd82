package dev.ratelimiter.autoconfigure.store;

import dev.ratelimiter.redis.LimiterScript;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The Lua scripts the Redis store reads from the classpath ({@link LimiterScript}): a native image holds only the
 * resources it is told of. Every script of the folder, so that a new one needs no line here. The registrar lives with
 * the store's wiring because {@code ratelimit-redis} knows no Spring.
 */
public final class LimiterScriptRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern(LimiterScript.LOCATION + "*.lua");
    }
}
