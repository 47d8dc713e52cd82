package dev.ratelimiter.core;

import java.util.Map;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The versioned store of runtime rules shared by every instance. Every write bumps the version and announces it,
 * so instances pick changes up at once; they also poll the version, in case an announcement is lost.
 *
 * <p>Rule writes are conditional on the version they were validated against: two operators changing rules at once
 * on two instances cannot produce together a rule set neither validated. A stale write fails with
 * {@link StaleVersionException} and changes nothing. Switches are written unconditionally: they are independent of
 * the rules, and the kill switch must work whatever the rules are.
 */
public interface RuleStore {

    /** Expected version meaning "whatever the store holds". */
    long ANY_VERSION = -1;

    Mono<RuntimeRules> load();

    /** Adds or replaces a rule if the store is still at {@code expectedVersion}; returns the new version. */
    Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion);

    /** Removes a rule if the store is still at {@code expectedVersion}; returns the new version. */
    Mono<Long> deleteRule(String id, long expectedVersion);

    /** Sets a switch (see {@link RuntimeRules#control()}); returns the new version. */
    Mono<Long> putControl(String name, String value);

    /** Versions announced by writers, on any instance. May complete or fail when the store goes away. */
    Flux<Long> changes();

    /**
     * A write that failed before anything was sent to the store (no connection had ever opened): nothing changed. Any
     * other failure of a write, a timeout above all, leaves its outcome unknown: it may have been sent, or be held by
     * the client to send on reconnecting, and be applied later.
     */
    final class NotSentException extends RuntimeException {

        public NotSentException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A conditional write found the store at another version than expected; nothing was written. */
    final class StaleVersionException extends RuntimeException {

        private final long current;

        public StaleVersionException(long expected, long current) {
            super("the rule store is at version " + current + ", not " + expected);
            this.current = current;
        }

        public long current() {
            return current;
        }
    }
}
