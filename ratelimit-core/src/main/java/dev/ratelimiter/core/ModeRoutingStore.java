package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import reactor.core.publisher.Mono;

/**
 * Sends each check where its rule's store mode says: local-mode checks to this instance's shares (no store call),
 * exact checks to the store. A request must pass both: local checks are decided first (a local refusal costs the
 * store nothing), then the exact ones; if those refuse, the local spend is given back.
 */
public final class ModeRoutingStore implements RateLimitStore {

    private final RateLimitStore exact;
    private final LeaseStore local;

    public ModeRoutingStore(RateLimitStore exact, LeaseStore local) {
        this.exact = exact;
        this.local = local;
    }

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        List<Check> localChecks = new ArrayList<>();
        List<Check> exactChecks = new ArrayList<>();
        for (Check check : checks) {
            (check.rule().storeMode() == StoreMode.LOCAL ? localChecks : exactChecks).add(check);
        }
        if (localChecks.isEmpty()) {
            return exact.evaluate(checks);
        }
        Verdict localVerdict = local.decide(localChecks);
        if (exactChecks.isEmpty() || !localVerdict.allowed()) {
            return Mono.just(localVerdict);
        }
        return exact.evaluate(exactChecks).map(exactVerdict -> {
            if (!exactVerdict.allowed()) {
                local.refund(localChecks);
            }
            if (exactVerdict.reason() != Verdict.Reason.EVALUATED) {
                return exactVerdict;
            }
            List<RuleOutcome> outcomes = new ArrayList<>(localVerdict.outcomes());
            outcomes.addAll(exactVerdict.outcomes());
            return Verdict.evaluated(outcomes, exactVerdict.source());
        });
    }

    public LeaseStore local() {
        return local;
    }

    @Override
    public <T> Optional<T> find(Class<T> type) {
        if (type.isInstance(this)) {
            return Optional.of(type.cast(this));
        }
        return type.isInstance(local) ? Optional.of(type.cast(local)) : exact.find(type);
    }
}
