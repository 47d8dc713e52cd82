package dev.ratelimiter.core;

import java.util.Map;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A rule store that forwards every call: tests override the call they want to slow, fail or move to a thread. */
public class ForwardingRuleStore implements RuleStore {

    private final RuleStore delegate;

    public ForwardingRuleStore(RuleStore delegate) {
        this.delegate = delegate;
    }

    @Override
    public Mono<RuntimeRules> load() {
        return delegate.load();
    }

    @Override
    public Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion) {
        return delegate.putRule(id, spec, expectedVersion);
    }

    @Override
    public Mono<Long> deleteRule(String id, long expectedVersion) {
        return delegate.deleteRule(id, expectedVersion);
    }

    @Override
    public Mono<Long> putControl(String name, String value) {
        return delegate.putControl(name, value);
    }

    @Override
    public Flux<Long> changes() {
        return delegate.changes();
    }
}
