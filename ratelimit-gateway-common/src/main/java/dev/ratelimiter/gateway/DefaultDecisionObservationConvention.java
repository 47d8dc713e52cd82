package dev.ratelimiter.gateway;

import java.util.function.Function;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.gateway.RateLimitObservation.ClientKeys;
import dev.ratelimiter.gateway.RateLimitObservation.DecisionKeys;
import io.micrometer.common.KeyValues;

/**
 * {@code ratelimit.decision}, keyed by what a dashboard groups decisions by (every key of
 * {@link RateLimitObservation.DecisionKeys}) and, as a high-cardinality key, the client id: the API key hashed as in
 * the bucket names and the decision events, so the raw key reaches no trace.
 */
public class DefaultDecisionObservationConvention implements DecisionObservationConvention {

    public static final String NAME = "ratelimit.decision";

    private static final String NONE = RateLimitObservation.NONE;

    /** The client id's value without a client-id secret: the unkeyed hash would let a guessable key be found. */
    public static final String UNKEYED = "unkeyed";

    private final ClientIdKeyring clientIds;
    private final Function<Rule, String> groupTag;

    /**
     * @param clientIds hashes the API key into the client id
     * @param groupTag the {@code ratelimit.rule.group} value of a rule: it must take few values, since a meter handler
     *        makes a timer series of each. A rule's own group is not that: a runtime rule posted without a group (a
     *        customer override) is in a group of its own, one more value per override. The auto-configuration's
     *        bounds runtime rules as the {@code rule} tag of the meters does (the group of a configured rule, else
     *        {@code runtime}).
     */
    public DefaultDecisionObservationConvention(ClientIdKeyring clientIds, Function<Rule, String> groupTag) {
        this.clientIds = clientIds;
        this.groupTag = groupTag;
    }

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(DecisionObservationContext context) {
        return "ratelimit decision";
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(DecisionObservationContext context) {
        RequestAttributes request = context.getRequest();
        Verdict verdict = context.getVerdict();
        RuleOutcome limiting = verdict == null ? null : limitingOf(verdict);
        RefusalAnswer refusal = context.getRefusal();
        return KeyValues.of(DecisionKeys.OUTCOME.withValue(outcome(context)),
                DecisionKeys.REFUSAL.withValue(refusal == null ? NONE : refusal.kind().error()),
                DecisionKeys.RULE_GROUP.withValue(limiting == null ? NONE : orNone(groupTag.apply(limiting.rule()))),
                DecisionKeys.TIER.withValue(request == null ? NONE : orNone(request.tier())),
                DecisionKeys.ROUTE_CLASS.withValue(request == null ? NONE : orNone(request.routeClass())),
                DecisionKeys.STORE_MODE.withValue(limiting == null ? NONE : label(limiting.rule().storeMode())),
                DecisionKeys.SOURCE.withValue(verdict == null ? NONE : verdict.source().label()),
                DecisionKeys.FALLBACK_REASON.withValue(verdict == null || verdict.fallbackReason() == null ? NONE
                        : verdict.fallbackReason().label()));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(DecisionObservationContext context) {
        RequestAttributes request = context.getRequest();
        String apiKey = request == null ? null : request.apiKey();
        ClientIds current = clientIds.current();
        if (apiKey == null) {
            return KeyValues.of(ClientKeys.CLIENT_ID.withValue(NONE));
        }
        // Without ratelimit.client-id.secret the id is a plain SHA-256 of the key, and a guessable key is found by
        // hashing guesses: not for a trace backend, which more people read than Redis.
        return KeyValues.of(ClientKeys.CLIENT_ID.withValue(current.isKeyed() ? current.of(apiKey) : UNKEYED));
    }

    /**
     * allowed, refused, shadow (allowed, though a shadow rule would have refused), undecided (decided by the failure
     * modes because the gateway stopped waiting) or cancelled (the request ended before its verdict).
     */
    protected String outcome(DecisionObservationContext context) {
        Verdict verdict = context.getVerdict();
        if (context.isUndecided()) {
            return "undecided";
        }
        if (context.getRefusal() != null) {
            return "refused";
        }
        if (verdict == null) {
            return context.isCancelled() ? "cancelled" : NONE;
        }
        return verdict.shadowDenials().isEmpty() ? "allowed" : "shadow";
    }

    /** The outcome the client is told of; with only shadow rules, the first of them. */
    private static RuleOutcome limitingOf(Verdict verdict) {
        return verdict.limiting().orElse(verdict.outcomes().isEmpty() ? null : verdict.outcomes().get(0));
    }

    private static String label(Enum<?> value) {
        return value == null ? NONE : value.name().toLowerCase(java.util.Locale.ROOT);
    }

    private static String orNone(String value) {
        return value == null ? NONE : value;
    }
}
