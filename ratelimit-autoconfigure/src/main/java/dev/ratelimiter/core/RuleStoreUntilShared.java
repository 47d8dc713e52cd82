package dev.ratelimiter.core;

import java.util.Map;
import java.util.function.BooleanSupplier;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * {@code store.type: auto} for runtime rules: kept in this instance's memory until the shared store has first
 * answered, then in the shared store for good. Rules written to memory meanwhile are replaced by the shared store's
 * (which every other instance follows); the move is announced as a change, so the rules in force are reloaded at once.
 */
public final class RuleStoreUntilShared implements RuleStore {

    /** Announced when the store moves: a version above any, so that every listener reloads. */
    static final long MOVED = Long.MAX_VALUE;

    private final RuleStore memory;
    private final RuleStore shared;
    private final BooleanSupplier sharedAnswers;
    private final Sinks.Many<Long> moved = Sinks.many().multicast().directBestEffort();
    private volatile boolean onShared;

    public RuleStoreUntilShared(RuleStore memory, RuleStore shared, BooleanSupplier sharedAnswers) {
        this.memory = memory;
        this.shared = shared;
        this.sharedAnswers = sharedAnswers;
    }

    /** Call when the shared store first answers: moves and announces it. */
    public void sharedAnswered() {
        if (!onShared && sharedAnswers.getAsBoolean()) {
            onShared = true;
            moved.tryEmitNext(MOVED);
        }
    }

    private RuleStore current() {
        if (!onShared) {
            sharedAnswered();
        }
        return onShared ? shared : memory;
    }

    @Override
    public Mono<RuntimeRules> load() {
        return Mono.defer(() -> current().load());
    }

    @Override
    public Mono<Long> version() {
        return Mono.defer(() -> current().version());
    }

    @Override
    public Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion) {
        return Mono.defer(() -> current().putRule(id, spec, expectedVersion));
    }

    @Override
    public Mono<Long> deleteRule(String id, long expectedVersion) {
        return Mono.defer(() -> current().deleteRule(id, expectedVersion));
    }

    @Override
    public Mono<Long> putControl(String name, String value) {
        return Mono.defer(() -> current().putControl(name, value));
    }

    @Override
    public Flux<Long> changes() {
        return Flux.merge(memory.changes().filter(version -> !onShared), shared.changes(), moved.asFlux());
    }
}
