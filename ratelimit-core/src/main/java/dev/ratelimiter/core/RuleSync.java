package dev.ratelimiter.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.core.RuntimeRules.Part;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Keeps this instance's rule set in step with the runtime rule store: it reloads when a change is announced and,
 * as a backstop for lost announcements, when a poll finds a newer version. A store that cannot be reached, or that
 * holds rules that do not validate, leaves the last good rule set in force indefinitely: limits stop changing,
 * they never disappear.
 *
 * <p>{@link #start()} reads the store once before it returns, so the stored rules are in force before the first
 * request when it is started with the application (the Spring glue starts it as the bean is created and stops it as
 * the bean is destroyed); {@link #stop()} ends the announcements and the poll, and it may be started again.
 */
public final class RuleSync {

    private static final Logger logger = LoggerFactory.getLogger(RuleSync.class);
    private static final Duration STORE_TIMEOUT = Duration.ofSeconds(2);

    private final RuleStore store;
    private final RuleSetFactory factory;
    private final RuleSetHolder holder;
    private final Duration pollInterval;
    private volatile Disposable.Composite subscriptions = Disposables.composite();
    private final Object lifecycle = new Object();
    private volatile RuntimeRules runtime = RuntimeRules.EMPTY;
    /** What the store held at the last apply: the same content again, still invalid, is not validated again. */
    private RuntimeRules lastStored;
    /**
     * The store's answers, numbered as they arrive: on one connection (the rules live in one slot) in the order the
     * store read them, so a higher number is a later reading.
     */
    private final AtomicLong answers = new AtomicLong();
    /** The number of the answer last applied. */
    private long lastApplied;
    private volatile Status status = new Status(State.STARTING, 0, null, null);
    private volatile Map<String, String> apiKeyNotes = Map.of();

    public RuleSync(RuleStore store, RuleSetFactory factory, RuleSetHolder holder, Duration pollInterval) {
        this.store = store;
        this.factory = factory;
        this.holder = holder;
        this.pollInterval = pollInterval;
    }

    /** How the last sync went. */
    public enum State {
        /** Not synced yet. */
        STARTING,
        /** The rule set in force is the store's latest. */
        IN_SYNC,
        /** The store could not be reached; the last good rule set stays in force. */
        STORE_UNREACHABLE,
        /** The store holds rules that do not validate; the last good rule set stays in force. */
        STORE_INVALID
    }

    /**
     * @param state how the last sync went
     * @param version version of the rule set in force
     * @param lastSync when the store was last read successfully
     * @param problem what went wrong, if anything
     */
    public record Status(State state, long version, Instant lastSync, String problem) {

        public boolean stale() {
            return state == State.STORE_UNREACHABLE || state == State.STORE_INVALID;
        }
    }

    /** Reads the store once (waiting at most its timeout), then follows it; a second start replaces the first. */
    public void start() {
        // Not on this object's monitor: the first read applies what it found under that monitor, on another thread.
        synchronized (lifecycle) {
            startFollowing();
        }
    }

    private void startFollowing() {
        // A fresh composite: the one a stop disposed would dispose at once whatever is added to it, and a restarted
        // context would follow the store no more. One started twice must not leave the first subscriptions running.
        subscriptions.dispose();
        subscriptions = Disposables.composite();
        refreshAndWait();
        // Every announcement and every poll reads the rules and compares them with those in force, by content: a
        // Redis that lost its data counts versions again from 1, so the same number can stand for other rules.
        subscriptions.add(Flux.defer(store::changes)
                .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofSeconds(1)).maxBackoff(Duration.ofSeconds(30))
                        .scheduler(Background.scheduler()))
                .concatMap(version -> refresh())
                .subscribe());
        // A poll slower than the interval (a store timing out) skips ticks instead of failing the loop.
        PeriodicTask poll = PeriodicTask.every("Polling the rule store", pollInterval, this::refresh);
        poll.start();
        subscriptions.add(poll::stop);
    }

    /**
     * Reads the store now and applies what it holds, waiting at most the store's timeout: for a caller that needs the
     * store's latest in force when it returns (a start, an operator's change), if the store answers.
     */
    public void refreshAndWait() {
        refresh().block(STORE_TIMEOUT.plusSeconds(1));
    }

    /** Reads the store now and applies what it holds; completes when done, never with an error. */
    public Mono<RuleSet> refresh() {
        // Deferred: a client that cannot connect may throw while the call is assembled, not only when it runs.
        return Mono.defer(store::load)
                .timeout(STORE_TIMEOUT, Background.scheduler())
                .map(stored -> new Answer(answers.incrementAndGet(), stored))
                // Off the thread that completed the reply (a Lettuce I/O thread, which decisions also wait on):
                // validating hundreds of rules takes milliseconds to seconds.
                .publishOn(Background.scheduler())
                .map(this::apply)
                .onErrorResume(failure -> {
                    unreachable(failure);
                    return Mono.just(holder.get());
                });
    }

    /** What the store answered to one read, numbered in the order the answers arrived. */
    record Answer(long number, RuntimeRules stored) {
    }

    synchronized RuleSet apply(Answer answer) {
        if (answer.number() < lastApplied) {
            // Read before an answer already in force (a poll or an announcement's read, validated on another thread
            // while an operator's change was read and applied): applying it would put older rules back in force —
            // a kill switch just released thrown again until the next poll, and the operator told it was not in force.
            return holder.get();
        }
        lastApplied = answer.number();
        RuntimeRules stored = answer.stored();
        if (stored.equals(lastStored) && status.state() == State.STORE_INVALID) {
            return holder.get();
        }
        lastStored = stored;
        RuntimeRules loaded = withLastGoodOfUnreadableParts(stored);
        if (!stored.unreadable().isEmpty()) {
            applyWhatValidates(loaded, new InvalidLimitException("ratelimit.rule-store", "the rule store has parts "
                    + "it cannot read, their last good version stays in force: " + stored.unreadable().values()));
            return holder.get();
        }
        if (loaded.equals(runtime) && status.state() == State.IN_SYNC) {
            return holder.get();
        }
        // Any other version is applied, lower ones too: a Redis that lost its data starts counting again at 1, and
        // its (empty) runtime rules are then the truth. A reading older than one applied was turned away above.
        try {
            RuleSet next = factory.create(loaded);
            holder.replace(next);
            runtime = loaded;
            noteApiKeys();
            if (status.state() != State.IN_SYNC || status.version() != loaded.version()) {
                logger.info("Rate-limit rules at version {} are in force ({} rules)", loaded.version(),
                        next.rules().size());
            }
            status = new Status(State.IN_SYNC, loaded.version(), Instant.now(), null);
        }
        catch (InvalidLimitException ex) {
            applyWhatValidates(loaded, ex);
        }
        return holder.get();
    }

    /** A part the store could not read (another type under its key, see rules_read.lua) keeps its last good copy. */
    private RuntimeRules withLastGoodOfUnreadableParts(RuntimeRules stored) {
        if (stored.unreadable().isEmpty()) {
            return stored;
        }
        return new RuntimeRules(stored.version(),
                stored.unreadable().containsKey(Part.SPECS) ? runtime.specs() : stored.specs(),
                stored.unreadable().containsKey(Part.CONTROL) ? runtime.control() : stored.control());
    }

    /**
     * The store holds rules that do not validate together: what does ({@link ValidRuntimeRules}) is put in force, with
     * the store's latest switches, and the problem reported.
     */
    private void applyWhatValidates(RuntimeRules loaded, InvalidLimitException problem) {
        ValidRuntimeRules kept = ValidRuntimeRules.of(loaded, runtime, factory);
        holder.replace(kept.ruleSet());
        runtime = kept.runtime();
        noteApiKeys();
        String reason = problem.getMessage()
                + (kept.broken().isEmpty() ? "" : " (rules not applied: " + kept.broken() + ")");
        if (status.state() != State.STORE_INVALID || !reason.equals(status.problem())) {
            logger.error("The rule store holds rules that do not validate (version {}); the rules that do, the last "
                    + "good version of the others and the store's switches are in force: {}", loaded.version(),
                    reason);
        }
        status = new Status(State.STORE_INVALID, loaded.version(), Instant.now(), reason);
    }

    /**
     * Warns once per change of each runtime rule whose API keys need the operator (see
     * {@link RuleDefinitions#apiKeyNotes}).
     */
    private void noteApiKeys() {
        Map<String, String> notes = factory.definitions().apiKeyNotes(runtime);
        notes.forEach((id, note) -> {
            if (!note.equals(apiKeyNotes.get(id))) {
                logger.warn("Runtime rule '{}': {}", id, note);
            }
        });
        apiKeyNotes = Collections.unmodifiableMap(notes);
    }

    private void unreachable(Throwable failure) {
        if (status.state() != State.STORE_UNREACHABLE) {
            logger.warn("The rate-limit rule store cannot be reached ({}); the rules of version {} stay in force",
                    failure.toString(), status.version());
        }
        status = new Status(State.STORE_UNREACHABLE, status.version(), status.lastSync(), failure.toString());
    }

    /** Validates the rule set {@code rules} would produce; throws {@link InvalidLimitException} naming the setting. */
    public RuleSet validate(RuntimeRules rules) {
        return factory.create(rules);
    }

    /** Reads the store's latest rules (not necessarily those in force: they may not validate). */
    RuntimeRules latest() {
        return Mono.defer(store::load).timeout(STORE_TIMEOUT, Background.scheduler())
                .block(STORE_TIMEOUT.plusSeconds(1));
    }

    /** The rule set in force on this instance. */
    public RuleSet rulesInForce() {
        return holder.get();
    }

    public RuntimeRules runtime() {
        return runtime;
    }

    public Status status() {
        return status;
    }

    /**
     * Runtime rules in force whose API keys need the operator, by id: keys that match no request here, keys matched
     * only through the previous secret, keys stored as sent or hashed without a secret. Empty when all is well.
     */
    public Map<String, String> apiKeyNotes() {
        return apiKeyNotes;
    }

    public void stop() {
        synchronized (lifecycle) {
            subscriptions.dispose();
        }
    }
}
