package dev.ratelimiter.core;

import java.util.Map;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The versioned store of runtime rules shared by every instance. Every write bumps the version and announces it,
 * so instances pick changes up at once; they also poll the version, in case an announcement is lost.
 */
public interface RuleStore {

    Mono<RuntimeRules> load();

    /** Current version only: the cheap poll. */
    Mono<Long> version();

    /** Adds or replaces a rule; returns the new version. */
    Mono<Long> putRule(String id, Map<String, String> spec);

    /** Removes a rule; returns the new version. */
    Mono<Long> deleteRule(String id);

    /** Sets a switch (see {@link RuntimeRules#control()}); returns the new version. */
    Mono<Long> putControl(String name, String value);

    /** Versions announced by writers, on any instance. May complete or fail when the store goes away. */
    Flux<Long> changes();
}
