package dev.ratelimiter.core;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rule set in force, swapped atomically: a request sees the old set or the new one, never a mixture. Whoever keeps
 * something per rule (the meters) is told of each new set once it is in force.
 */
public final class RuleSetHolder implements Supplier<RuleSet> {

    private static final Logger logger = LoggerFactory.getLogger(RuleSetHolder.class);

    private final AtomicReference<RuleSet> current;
    private final List<Consumer<RuleSet>> onReplace = new CopyOnWriteArrayList<>();

    public RuleSetHolder(RuleSet initial) {
        this.current = new AtomicReference<>(initial);
    }

    @Override
    public RuleSet get() {
        return current.get();
    }

    public void replace(RuleSet next) {
        current.set(next);
        for (Consumer<RuleSet> listener : onReplace) {
            try {
                listener.accept(next);
            }
            catch (RuntimeException ex) {
                // The new rules are in force whatever a listener does: one that fails must not undo the change.
                logger.warn("A listener of rule set changes failed", ex);
            }
        }
    }

    /**
     * Calls {@code listener} with every rule set put in force from now on, on the thread that replaces it (the rule
     * sync's, never a request's).
     */
    public void onReplace(Consumer<RuleSet> listener) {
        onReplace.add(listener);
    }
}
