package dev.ratelimiter.core;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * {@code store.type: auto} for runtime rules: kept in this instance's memory until the shared store has first
 * answered, then in the shared store for good. The move is announced as a change, so the rules in force are reloaded
 * at once.
 *
 * <p>What an operator wrote to memory meanwhile is not simply forgotten. The switches (the kill switch, a tier's
 * enforcement) are carried into the shared store before the move: an operator who pressed the kill switch while Redis
 * was unreachable meant it, and losing it the moment Redis came back would turn enforcement on again in the middle of
 * an incident. Runtime rules are not carried, because the shared store's version of a rule, which every other
 * instance follows, may be newer than this instance's; they are logged, so that whoever wrote them can post them
 * again.
 */
public final class RuleStoreUntilShared implements RuleStore {

    private static final Logger logger = LoggerFactory.getLogger(RuleStoreUntilShared.class);

    /** Announced when the store moves: a version above any, so that every listener reloads. */
    static final long MOVED = Long.MAX_VALUE;

    private final RuleStore memory;
    private final RuleStore shared;
    private final BooleanSupplier sharedAnswers;
    private final Sinks.Many<Long> moved = Sinks.many().multicast().directBestEffort();
    private final AtomicBoolean moving = new AtomicBoolean();
    private volatile boolean onShared;

    public RuleStoreUntilShared(RuleStore memory, RuleStore shared, BooleanSupplier sharedAnswers) {
        this.memory = memory;
        this.shared = shared;
        this.sharedAnswers = sharedAnswers;
    }

    /**
     * Call when the shared store first answers: carries the switches over, then moves and announces it. Until the
     * switches are written, memory stays in force; if writing them fails, the move is tried again on the next call.
     */
    public void sharedAnswered() {
        if (onShared || !sharedAnswers.getAsBoolean() || !moving.compareAndSet(false, true)) {
            return;
        }
        carry().subscribe(ignored -> { }, failure -> {
            logger.warn("The shared rule store answered, but the switches set in memory could not be written to it"
                    + " ({}); staying on memory and trying again", failure.toString());
            moving.set(false);
        });
    }

    /**
     * Carries memory's switches, then moves — unless memory changed meanwhile (an operator wrote while the carry was
     * on its way): then carries again, so that no write answered "in force" is left behind in memory.
     */
    private Mono<Void> carry() {
        return Mono.defer(memory::load).flatMap(inMemory -> shared.load()
                .flatMap(inShared -> carrySwitches(inMemory, inShared))
                .then(Mono.defer(() -> memory.load().flatMap(now -> {
                    synchronized (this) {
                        if (now.version() == inMemory.version()) {
                            move();
                            return Mono.<Void>empty();
                        }
                    }
                    return carry();
                }))));
    }

    /**
     * A switch is carried when the shared store has none of that name, or when memory's is the rollback direction
     * (the kill switch on, a tier's enforcement off): those win, whoever else set the switch, because they let traffic
     * through and the operator meant them. A switch released here during the outage does not release one that other
     * instances set in the shared store.
     */
    private Mono<Void> carrySwitches(RuntimeRules inMemory, RuntimeRules inShared) {
        if (!inMemory.specs().isEmpty()) {
            logger.warn("Runtime rules written while the shared rule store was unreachable are not carried into it,"
                    + " where other instances may hold newer versions; post them again if they are still wanted: {}",
                    inMemory.specs().keySet());
        }
        Map<String, String> carried = new LinkedHashMap<>();
        inMemory.control().forEach((name, value) -> {
            if (!inShared.control().containsKey(name) || rollback(name, value)) {
                carried.put(name, value);
            }
        });
        if (carried.isEmpty()) {
            return Mono.empty();
        }
        logger.warn("Carrying switches set while the shared rule store was unreachable into it, for every instance:"
                + " {}", carried);
        return Flux.fromIterable(carried.entrySet())
                .concatMap(entry -> shared.putControl(entry.getKey(), entry.getValue()))
                .then();
    }

    private static boolean rollback(String name, String value) {
        return RuntimeRules.KILL_SWITCH.equals(name) ? "true".equals(value)
                : name.endsWith(".enforce") && "false".equals(value);
    }

    private void move() {
        onShared = true;
        moved.tryEmitNext(MOVED);
    }

    private RuleStore current() {
        if (!onShared) {
            sharedAnswered();
        }
        return onShared ? shared : memory;
    }

    /**
     * The store a write goes to, chosen under the same lock as the move's last look at memory: a write is either seen
     * by that look (and carried) or made after the move (to the shared store).
     */
    private synchronized <T> Mono<T> write(Function<RuleStore, Mono<T>> change) {
        RuleStore target = current();
        if (target == memory) {
            // Memory answers as soon as it is subscribed to: subscribed here, the write is done under this lock.
            CompletableFuture<T> done = change.apply(memory).toFuture();
            return Mono.fromFuture(done);
        }
        return change.apply(target);
    }

    @Override
    public Mono<RuntimeRules> load() {
        return Mono.defer(() -> current().load());
    }

    @Override
    public Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion) {
        return Mono.defer(() -> write(store -> store.putRule(id, spec, expectedVersion)));
    }

    @Override
    public Mono<Long> deleteRule(String id, long expectedVersion) {
        return Mono.defer(() -> write(store -> store.deleteRule(id, expectedVersion)));
    }

    @Override
    public Mono<Long> putControl(String name, String value) {
        return Mono.defer(() -> write(store -> store.putControl(name, value)));
    }

    @Override
    public Flux<Long> changes() {
        return Flux.merge(memory.changes().filter(version -> !onShared), shared.changes(), moved.asFlux());
    }
}
