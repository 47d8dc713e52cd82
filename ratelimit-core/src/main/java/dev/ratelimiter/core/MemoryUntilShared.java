package dev.ratelimiter.core;

import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * {@code store.type: auto}: decides from this instance's memory — an exact limiter for one instance — until the shared
 * store has first answered, then from the shared store for good, with its usual failure modes when it fails later.
 * A gateway that started before its Redis did is thereby a per-instance limiter only until Redis comes, never for the
 * rest of its life; one log line says when it moved.
 */
public final class MemoryUntilShared implements RateLimitStore {

    private static final Logger logger = LoggerFactory.getLogger(MemoryUntilShared.class);

    private final RateLimitStore memory;
    private final RateLimitStore shared;
    private final BooleanSupplier sharedAnswers;
    private final String sharedName;
    private volatile boolean onShared;

    public MemoryUntilShared(RateLimitStore memory, RateLimitStore shared, BooleanSupplier sharedAnswers,
            String sharedName) {
        this.memory = memory;
        this.shared = shared;
        this.sharedAnswers = sharedAnswers;
        this.sharedName = sharedName;
        // Shared from the start when it answers already: nothing moved, nothing to say.
        this.onShared = sharedAnswers.getAsBoolean();
    }

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        return onShared() ? shared.evaluate(checks) : memory.evaluate(checks);
    }

    /** Whether decisions have moved to the shared store. */
    public boolean onShared() {
        if (!onShared && sharedAnswers.getAsBoolean()) {
            synchronized (this) {
                if (!onShared) {
                    onShared = true;
                    logger.info("{} answers: rate limits are now shared by every instance (they were kept in this "
                            + "instance's memory until now)", sharedName);
                }
            }
        }
        return onShared;
    }

    @Override
    public <T> Optional<T> find(Class<T> type) {
        if (type.isInstance(this)) {
            return Optional.of(type.cast(this));
        }
        Optional<T> found = shared.find(type);
        return found.isPresent() ? found : memory.find(type);
    }
}
