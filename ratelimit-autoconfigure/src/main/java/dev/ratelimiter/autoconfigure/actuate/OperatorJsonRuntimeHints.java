package dev.ratelimiter.autoconfigure.actuate;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreBreaker;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.WhenMissing;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The limiter's own types in the JSON the operator reads (the {@code ratelimit} endpoint, its health component, the
 * rules API): the bodies are maps built by hand, but a rule's settings and the store's state go in as enums, whose
 * constants and annotations Jackson reads reflectively.
 */
public final class OperatorJsonRuntimeHints implements RuntimeHintsRegistrar {

    /** Every type other than the JDK's that a body holds; {@code OperatorJsonRuntimeHintsTest} walks real bodies. */
    static final Class<?>[] TYPES = { Dimension.class, Mode.class, FailureMode.class, StoreMode.class,
            WhenMissing.class, Scope.class, RuleSync.State.class, StoreBreaker.State.class };

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        new BindingReflectionHintsRegistrar().registerReflectionHints(hints.reflection(), TYPES);
    }
}
