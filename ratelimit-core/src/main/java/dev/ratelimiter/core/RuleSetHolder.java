package dev.ratelimiter.core;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The rule set in force, swapped atomically: a request sees the old set or the new one, never a mixture.
 */
public final class RuleSetHolder implements Supplier<RuleSet> {

    private final AtomicReference<RuleSet> current;

    public RuleSetHolder(RuleSet initial) {
        this.current = new AtomicReference<>(initial);
    }

    @Override
    public RuleSet get() {
        return current.get();
    }

    public void replace(RuleSet next) {
        current.set(next);
    }
}
