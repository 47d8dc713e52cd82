package dev.ratelimiter.core;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Runtime rules kept in this instance only: for a single gateway without Redis (the sample on a fresh machine).
 * In a fleet, use the Redis rule store so that a change reaches every instance.
 */
public final class InMemoryRuleStore implements RuleStore {

    private final Sinks.Many<Long> announcements = Sinks.many().multicast().directBestEffort();
    private RuntimeRules rules = RuntimeRules.EMPTY;

    @Override
    public synchronized Mono<RuntimeRules> load() {
        return Mono.just(rules);
    }

    @Override
    public Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion) {
        return change(expectedVersion, specs -> specs.put(id, Map.copyOf(spec)), control -> { });
    }

    @Override
    public Mono<Long> deleteRule(String id, long expectedVersion) {
        return change(expectedVersion, specs -> specs.remove(id), control -> { });
    }

    @Override
    public Mono<Long> putControl(String name, String value) {
        return change(ANY_VERSION, specs -> { }, control -> control.put(name, value));
    }

    @Override
    public Flux<Long> changes() {
        return announcements.asFlux();
    }

    private Mono<Long> change(long expectedVersion, Consumer<Map<String, Map<String, String>>> specChange,
            Consumer<Map<String, String>> controlChange) {
        return Mono.fromSupplier(() -> {
            long version;
            synchronized (this) {
                if (expectedVersion != ANY_VERSION && expectedVersion != rules.version()) {
                    throw new StaleVersionException(expectedVersion, rules.version());
                }
                Map<String, Map<String, String>> specs = new HashMap<>(rules.specs());
                Map<String, String> control = new HashMap<>(rules.control());
                specChange.accept(specs);
                controlChange.accept(control);
                rules = new RuntimeRules(rules.version() + 1, specs, control);
                version = rules.version();
            }
            announcements.tryEmitNext(version);
            return version;
        });
    }
}
