package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The decision on one request: allowed unless an enforced rule denied it, with every rule's outcome.
 *
 * @param allowed whether the request may proceed
 * @param outcomes one per applicable rule, shadow rules included
 * @param source where it was decided
 * @param reason why, when no rule was consulted
 */
public record Verdict(boolean allowed, List<RuleOutcome> outcomes, Source source, Reason reason) {

    /** Where a verdict was made. */
    public enum Source {
        /** The shared store: exact across every instance. */
        STORE,
        /** This instance's memory, by configuration: the memory store, local-mode shares, the denial cache. */
        LOCAL,
        /** This instance's memory because the store could not answer in time: each rule by its failure mode. */
        FALLBACK,
        /** No store was asked. */
        NONE
    }

    /** Why a request was allowed without consulting any rule. */
    public enum Reason {
        /** Rules were evaluated. */
        EVALUATED,
        /** No rule applies to the request. */
        NO_RULE,
        /** The global kill switch hard-allows every request. */
        KILL_SWITCH,
        /** The store could not answer and a rule that fails closed applies: the request is refused with 503. */
        STORE_UNAVAILABLE
    }

    public Verdict {
        outcomes = List.copyOf(outcomes);
    }

    public static Verdict evaluated(List<RuleOutcome> outcomes, Source source) {
        return new Verdict(outcomes.stream().noneMatch(RuleOutcome::enforcedDenial), outcomes, source,
                Reason.EVALUATED);
    }

    /** Refused because a rule that fails closed could not be checked; {@code outcomes} hold those rules. */
    public static Verdict unavailable(List<RuleOutcome> outcomes) {
        return new Verdict(false, outcomes, Source.NONE, Reason.STORE_UNAVAILABLE);
    }

    public static Verdict unlimited(Reason reason) {
        return new Verdict(true, List.of(), Source.NONE, reason);
    }

    /**
     * The outcome to report to the client: when denied, the enforced denial that asks the longest wait; when
     * allowed, the enforced rule with the smallest share of its quota left. Empty when only shadow rules applied.
     */
    public Optional<RuleOutcome> limiting() {
        List<RuleOutcome> enforced = enforced();
        if (!allowed) {
            return enforced.stream().filter(RuleOutcome::enforcedDenial)
                    .max(Comparator.comparing(RuleOutcome::retryAfter));
        }
        return enforced.stream().min(Comparator.comparingDouble(o -> (double) o.remaining() / o.rule().limit().quota()));
    }

    /** Concurrency checks whose permit this verdict took: all of them that allowed, if the request is allowed. */
    public List<Check> permitsHeld() {
        if (!allowed) {
            return List.of();
        }
        List<Check> held = List.of();
        for (RuleOutcome outcome : outcomes) {
            if (outcome.allowed() && outcome.check().concurrency()) {
                if (held.isEmpty()) {
                    held = new ArrayList<>(1);
                }
                held.add(outcome.check());
            }
        }
        return held;
    }

    /** Outcomes of enforced checks, which clients are told about. */
    public List<RuleOutcome> enforced() {
        return outcomes.stream().filter(o -> !o.check().shadow()).toList();
    }

    /** Outcomes of shadow checks that would have denied. */
    public List<RuleOutcome> shadowDenials() {
        return outcomes.stream().filter(RuleOutcome::shadowDenial).toList();
    }
}
