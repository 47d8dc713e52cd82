package dev.ratelimiter.core;

import java.util.Map;

/**
 * What became of an operator's change to the rules ({@link RuleAdmin}): applied, with what was written, or refused,
 * with why.
 *
 * @param outcome how the change ended
 * @param written what was written and the rule {@code version} it made; empty when refused
 * @param error a stable name for the refusal ({@code invalid_rule}, {@code not_in_force}, ...), or null
 * @param field the setting or field at fault, or null
 * @param reason a sentence for the operator, or null
 */
public record RuleChange(Outcome outcome, Map<String, Object> written, String error, String field, String reason) {

    /**
     * How a change ended. Each has the HTTP status it is conventionally answered with, which the audit log prints
     * too, so that one line reads the same whichever way the change came in.
     */
    public enum Outcome {
        APPLIED(200),
        /** The change does not validate, or names something that cannot be changed this way. */
        INVALID(400),
        /** It deletes a runtime rule that does not exist. */
        NOT_FOUND(404),
        /** It conflicts with the configuration, another change, or a broken rule the store holds. */
        CONFLICT(409),
        /** The change was conditional ({@link WriteCondition}) and the rules no longer meet the condition. */
        PRECONDITION_FAILED(412),
        /** The rule store could not be reached, or the change is written but not in force here yet. */
        UNAVAILABLE(503);

        private final int code;

        Outcome(int code) {
            this.code = code;
        }

        /** The conventional HTTP status. */
        public int code() {
            return code;
        }
    }

    static RuleChange applied(Map<String, Object> written) {
        return new RuleChange(Outcome.APPLIED, written, null, null, null);
    }

    static RuleChange refused(Outcome outcome, String error, String field, String reason) {
        return new RuleChange(outcome, Map.of(), error, field, reason);
    }

    public boolean isApplied() {
        return outcome == Outcome.APPLIED;
    }
}
