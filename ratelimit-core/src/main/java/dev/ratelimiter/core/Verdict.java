package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The decision on one request: allowed unless an enforced rule denied it, with every rule's outcome. Immutable; the
 * outcome reported to the client ({@link #limiting()}) is worked out once, when the verdict is made, because the
 * headers, the metrics and the decision event all ask for it.
 */
public final class Verdict {

    /** Where a verdict was made. */
    public enum Source {
        /** The shared store: exact across every instance. */
        STORE,
        /** This instance's memory, by configuration: the memory store, local-mode shares, the denial cache. */
        LOCAL,
        /** This instance's memory because the store could not answer in time: each rule by its failure mode. */
        FALLBACK,
        /** No store was asked. */
        NONE;

        private final String label = name().toLowerCase(java.util.Locale.ROOT);

        /** Lower-case name, for events and logs. */
        public String label() {
            return label;
        }
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
        STORE_UNAVAILABLE,
        /**
         * The request lacks a value a rule's buckets are per, and that rule {@linkplain WhenMissing#DENY denies} such
         * requests: refused with 400, no store asked.
         */
        MISSING_IDENTITY;

        private final String label = name().toLowerCase(java.util.Locale.ROOT);

        /** Lower-case name, for events and logs. */
        public String label() {
            return label;
        }
    }

    private static final Verdict[] UNLIMITED = new Verdict[Reason.values().length];

    static {
        for (Reason reason : Reason.values()) {
            UNLIMITED[reason.ordinal()] = new Verdict(true, List.of(), Source.NONE, reason);
        }
    }

    private final boolean allowed;
    private final List<RuleOutcome> outcomes;
    private final Source source;
    private final Reason reason;
    private final List<RuleOutcome> enforced;
    private final RuleOutcome limiting;
    private final FallbackReason fallbackReason;

    /**
     * @param allowed whether the request may proceed
     * @param outcomes one per applicable rule, shadow rules included
     * @param source where it was decided
     * @param reason why, when no rule was consulted
     */
    public Verdict(boolean allowed, List<RuleOutcome> outcomes, Source source, Reason reason) {
        this(allowed, outcomes, source, reason, null);
    }

    private Verdict(boolean allowed, List<RuleOutcome> outcomes, Source source, Reason reason,
            FallbackReason fallbackReason) {
        this.fallbackReason = fallbackReason;
        this.allowed = allowed;
        this.outcomes = List.copyOf(outcomes);
        this.source = source;
        this.reason = reason;
        this.enforced = enforcedOf(this.outcomes);
        this.limiting = limitingOf(allowed, enforced);
    }

    public static Verdict evaluated(List<RuleOutcome> outcomes, Source source) {
        return new Verdict(noEnforcedDenial(outcomes), outcomes, source, Reason.EVALUATED);
    }

    private static boolean noEnforcedDenial(List<RuleOutcome> outcomes) {
        for (RuleOutcome outcome : outcomes) {
            if (outcome.enforcedDenial()) {
                return false;
            }
        }
        return true;
    }

    /** Refused because a rule that fails closed could not be checked; {@code outcomes} hold those rules. */
    public static Verdict unavailable(List<RuleOutcome> outcomes) {
        return unavailable(outcomes, null);
    }

    /** As {@link #unavailable(List)}, the store having failed for {@code why}. */
    public static Verdict unavailable(List<RuleOutcome> outcomes, FallbackReason why) {
        return new Verdict(false, outcomes, Source.NONE, Reason.STORE_UNAVAILABLE, why);
    }

    /** Decided by each rule's failure mode because the store could not answer, for {@code why}. */
    public static Verdict fallback(List<RuleOutcome> outcomes, FallbackReason why) {
        return new Verdict(noEnforcedDenial(outcomes), outcomes, Source.FALLBACK, Reason.EVALUATED, why);
    }

    /** A refusal by a rule whose key the request has no value for ({@link WhenMissing#DENY}). */
    public static Verdict missingIdentity(RuleOutcome refusal) {
        return new Verdict(false, List.of(refusal), Source.NONE, Reason.MISSING_IDENTITY);
    }

    public static Verdict unlimited(Reason reason) {
        return UNLIMITED[reason.ordinal()];
    }

    public boolean allowed() {
        return allowed;
    }

    public List<RuleOutcome> outcomes() {
        return outcomes;
    }

    public Source source() {
        return source;
    }

    public Reason reason() {
        return reason;
    }

    /**
     * Why the store could not decide, when it could not ({@link Source#FALLBACK}, or a refusal
     * {@link Reason#STORE_UNAVAILABLE}); else null. Null too when the gateway stopped waiting before the store
     * stack answered (Server MVC's wait bound): the store did not fail, the request did not wait.
     */
    public FallbackReason fallbackReason() {
        return fallbackReason;
    }

    /**
     * The outcome to report to the client: when denied, the enforced denial that asks the longest wait; when
     * allowed, the enforced rule with the smallest share of its quota left. Empty when only shadow rules applied.
     */
    public Optional<RuleOutcome> limiting() {
        return Optional.ofNullable(limiting);
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
        return enforced;
    }

    /** Outcomes of shadow checks that would have denied. */
    public List<RuleOutcome> shadowDenials() {
        List<RuleOutcome> denials = List.of();
        for (RuleOutcome outcome : outcomes) {
            if (outcome.shadowDenial()) {
                if (denials.isEmpty()) {
                    denials = new ArrayList<>(1);
                }
                denials.add(outcome);
            }
        }
        return denials;
    }

    private static List<RuleOutcome> enforcedOf(List<RuleOutcome> outcomes) {
        for (RuleOutcome outcome : outcomes) {
            if (outcome.check().shadow()) {
                // Some are in shadow: the enforced ones in a list of their own (rare).
                return outcomes.stream().filter(o -> !o.check().shadow()).toList();
            }
        }
        return outcomes;
    }

    private static RuleOutcome limitingOf(boolean allowed, List<RuleOutcome> enforced) {
        RuleOutcome best = null;
        for (RuleOutcome outcome : enforced) {
            if (!allowed) {
                if (outcome.enforcedDenial() && (best == null || outcome.retryAfter().compareTo(best.retryAfter()) > 0)) {
                    best = outcome;
                }
            }
            else if (best == null || share(outcome) < share(best)) {
                best = outcome;
            }
        }
        return best;
    }

    private static double share(RuleOutcome outcome) {
        return (double) outcome.remaining() / outcome.rule().limit().quota();
    }

    @Override
    public String toString() {
        return "Verdict[allowed=" + allowed + ", source=" + source + ", reason=" + reason + ", outcomes=" + outcomes
                + "]";
    }
}
