package dev.ratelimiter.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongFunction;

import dev.ratelimiter.core.RuleChange.Outcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * The operator's changes to the rules, behind the actuator endpoints: every change is validated against the whole
 * rule set it would produce before anything is written, so a bad rule is refused and the rules in force stay. Each
 * change answers a {@link RuleChange}, which the endpoints turn into HTTP.
 */
public final class RuleAdmin {

    /** One line per operator change, refused or not: who, what, and the rule version before and after. */
    private static final Logger audit = LoggerFactory.getLogger("dev.ratelimiter.audit");

    /** The operator of calls made in-process (tests, code of the application), not through an endpoint. */
    public static final String IN_PROCESS = "(in-process)";

    /**
     * The error of a write whose outcome is unknown: sent, but not answered in time ({@link Outcome#UNAVAILABLE}, as
     * the store did not answer; unlike {@code rule_store_unavailable}, something may have changed).
     */
    public static final String OUTCOME_UNKNOWN = "rule_store_outcome_unknown";

    private static final Duration STORE_TIMEOUT = Duration.ofSeconds(2);
    private static final int WRITE_ATTEMPTS = 3;

    private final RuleStore store;
    private final RuleSync sync;
    private final RuleSetFactory factory;

    public RuleAdmin(RuleStore store, RuleSync sync, RuleSetFactory factory) {
        this.store = store;
        this.sync = sync;
        this.factory = factory;
    }

    /**
     * Adds or replaces a runtime rule from its settings as sent (nested maps and lists, relaxed names). Its API keys
     * are written hashed ({@link RuleDefinitions#specToStore}), never as sent.
     */
    public RuleChange put(String id, Map<String, Object> settings) {
        return put(id, settings, IN_PROCESS);
    }

    /** {@link #put(String, Map)} on behalf of {@code operator}, written to the audit log. */
    public RuleChange put(String id, Map<String, Object> settings, String operator) {
        return put(id, settings, operator, WriteCondition.NONE);
    }

    /** {@link #put(String, Map, String)} only if the rules meet {@code condition} when the rule is written. */
    public RuleChange put(String id, Map<String, Object> settings, String operator, WriteCondition condition) {
        long before = sync.status().version();
        return audited(operator, "put-rule", id, before, putRule(id, settings, condition));
    }

    /**
     * The rule {@link #put} would store for these settings, built but written nowhere: a proposal to judge first (a
     * what-if replay). Refuses what {@code put} refuses, with an {@link InvalidLimitException} naming the setting.
     */
    public Rule proposed(String id, Map<String, Object> settings) {
        if (!PolicyNames.isValid(id)) {
            throw new InvalidLimitException("id", "Rule ids must be 1 to 128 letters, digits, '.', '_' or '-', "
                    + "starting with a letter or digit; got '" + id + "'.");
        }
        Map<String, String> sent = new LinkedHashMap<>();
        settings.forEach((name, value) -> flatten(name, value, sent));
        RuleDefinitions definitions = factory.definitions();
        return definitions.runtimeRule(id, definitions.specToStore(id, sent)).rule().get();
    }

    public RuleChange delete(String id) {
        return delete(id, IN_PROCESS);
    }

    /** {@link #delete(String)} on behalf of {@code operator}, written to the audit log. */
    public RuleChange delete(String id, String operator) {
        return delete(id, operator, WriteCondition.NONE);
    }

    /** {@link #delete(String, String)} only if the rules meet {@code condition} when the rule is deleted. */
    public RuleChange delete(String id, String operator, WriteCondition condition) {
        long before = sync.status().version();
        return audited(operator, "delete-rule", id, before, deleteRule(id, condition));
    }

    /** Sets the kill switch or a tier's enforcement flag; answers 200 only once it is in force on this instance. */
    public RuleChange control(String name, boolean value) {
        return control(name, value, IN_PROCESS);
    }

    /** {@link #control(String, boolean)} on behalf of {@code operator}, written to the audit log. */
    public RuleChange control(String name, boolean value, String operator) {
        long before = sync.status().version();
        boolean killSwitch = RuntimeRules.KILL_SWITCH.equals(name);
        // a name of another shape is audited whole (and refused)
        String tier = killSwitch ? null : Objects.requireNonNullElse(RuntimeRules.tierOfEnforceKey(name), name);
        return audited(operator, (killSwitch ? "set-kill-switch=" : "set-tier-enforce=") + value,
                killSwitch ? null : "tier", tier, before, setControl(name, value));
    }

    private static RuleChange audited(String operator, String action, String id, long before, RuleChange result) {
        return audited(operator, action, id == null ? null : "rule", id, before, result);
    }

    /**
     * One audit line. Everything that came from the request (the operator's name, the rule id, the tier) is printed
     * quoted and escaped, so that no value can end the line and forge another.
     */
    private static RuleChange audited(String operator, String action, String subjectName, String subject, long before,
            RuleChange result) {
        Object after = result.isApplied() ? result.written().get("version") : null;
        String error = result.error();
        audit.info("operator={} action={}{} version={}->{} status={}{}", JsonText.quote(operator), action,
                subject == null ? "" : " " + subjectName + "=" + JsonText.quote(subject), before,
                after == null ? before : after, result.outcome().code(), error == null ? "" : " error=" + error);
        return result;
    }

    private RuleChange putRule(String id, Map<String, Object> settings, WriteCondition condition) {
        if (!PolicyNames.isValid(id)) {
            return RuleChange.refused(Outcome.INVALID, "invalid_rule", "id",
                    "Rule ids must be 1 to 128 letters, digits, '.', '_' or "
                    + "'-', starting with a letter or digit; got '" + id + "'.");
        }
        if (RuleSet.UNKNOWN_KEYS.equals(id)) {
            return RuleChange.refused(Outcome.INVALID, "invalid_rule", "id",
                    "'" + RuleSet.UNKNOWN_KEYS + "' is the bucket of API keys "
                    + "nobody listed; it is set by ratelimit.api-key.unknown.limit, not at runtime.");
        }
        Map<String, String> sent = new LinkedHashMap<>();
        settings.forEach((name, value) -> flatten(name, value, sent));
        Map<String, String> spec;
        try {
            spec = factory.definitions().specToStore(id, sent);
        }
        catch (InvalidLimitException ex) {
            return RuleChange.refused(Outcome.INVALID, "invalid_rule", ex.setting(), ex.getMessage());
        }
        return writeRule(id, condition, specs -> specs.put(id, spec),
                expected -> store.putRule(id, spec, expected));
    }

    private RuleChange deleteRule(String id, WriteCondition condition) {
        RuntimeRules latest;
        try {
            latest = sync.latest();
        }
        catch (RuntimeException ex) {
            return unavailable(ex);
        }
        if (!latest.specs().containsKey(id)) {
            if (factory.isConfigured(id)) {
                return RuleChange.refused(Outcome.CONFLICT, "configured_rule", null,
                        "Rule '" + id + "' is defined in the application's "
                        + "configuration and cannot be deleted at runtime; put a rule with the same id to change it "
                        + "(for example mode: shadow).");
            }
            return RuleChange.refused(Outcome.NOT_FOUND, "unknown_rule", null,
                    "There is no runtime rule '" + id + "'.");
        }
        return writeRule(id, condition, specs -> specs.remove(id), expected -> store.deleteRule(id, expected));
    }

    private RuleChange setControl(String name, boolean value) {
        if (!RuntimeRules.KILL_SWITCH.equals(name) && !isEnforceSwitch(name)) {
            return RuleChange.refused(Outcome.INVALID, "invalid_control", "tier",
                    "Tier names are 1 to 128 letters, digits, '.', '_' "
                    + "or '-'; got '" + name.substring(5, Math.max(5, name.length() - 8)) + "'.");
        }
        Map<String, Object> body = new LinkedHashMap<>(Map.of(name, value));
        try {
            body.put("version", store.putControl(name, String.valueOf(value)).block(STORE_TIMEOUT));
        }
        catch (RuntimeException ex) {
            return notWritten(ex);
        }
        sync.refreshAndWait();
        RuleSet inForce = sync.rulesInForce();
        boolean applied = RuntimeRules.KILL_SWITCH.equals(name) ? inForce.killSwitch() == value
                : inForce.enforced(RuntimeRules.tierOfEnforceKey(name)) == value;
        if (!applied) {
            return RuleChange.refused(Outcome.UNAVAILABLE, "not_in_force", null,
                    "The switch was written to the rule store (version "
                    + body.get("version") + ") but is not in force on this instance yet (" + sync.status().state()
                    + (sync.status().problem() != null ? ": " + sync.status().problem() : "")
                    + "); it takes effect when the store is read again.");
        }
        return RuleChange.applied(body);
    }

    private static boolean isEnforceSwitch(String name) {
        String tier = RuntimeRules.tierOfEnforceKey(name);
        return tier != null && PolicyNames.isValid(tier);
    }

    /**
     * Validates a change against the store's latest rules — the whole rule set it would produce — and writes it only
     * if the store is still at that version; a write that lost a race is checked and validated again on the newer
     * rules (where a condition on the version no longer holds).
     */
    private RuleChange writeRule(String id, WriteCondition condition,
            Consumer<Map<String, Map<String, String>>> change, LongFunction<Mono<Long>> write) {
        for (int attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
            RuntimeRules latest;
            try {
                latest = sync.latest();
            }
            catch (RuntimeException ex) {
                return unavailable(ex);
            }
            String unmet = condition.unmet(id, latest.version(),
                    latest.specs().containsKey(id) || factory.isConfigured(id));
            if (unmet != null) {
                return RuleChange.refused(Outcome.PRECONDITION_FAILED, "precondition_failed", null, unmet);
            }
            Map<String, Map<String, String>> specs = new HashMap<>(latest.specs());
            change.accept(specs);
            try {
                sync.validate(new RuntimeRules(latest.version(), specs, latest.control()));
            }
            catch (InvalidLimitException ex) {
                return refused(id, latest, ex);
            }
            long written;
            try {
                written = write.apply(latest.version()).block(STORE_TIMEOUT);
            }
            catch (RuleStore.StaleVersionException stale) {
                continue;
            }
            catch (RuntimeException ex) {
                return notWritten(ex);
            }
            sync.refreshAndWait();
            RuleSync.Status status = sync.status();
            if (status.state() != RuleSync.State.IN_SYNC || status.version() < written) {
                return RuleChange.refused(Outcome.UNAVAILABLE, "not_in_force", null,
                        "The change was written to the rule store (version "
                        + written + ") but is not in force on this instance (" + status.state()
                        + (status.problem() != null ? ": " + status.problem() : "") + ").");
            }
            return RuleChange.applied(Map.of("id", id, "version", written));
        }
        return RuleChange.refused(Outcome.CONFLICT, "concurrent_change", null,
                "The rules changed " + WRITE_ATTEMPTS + " times while "
                + "this change was being validated; nothing was written. Read the rules and try again.");
    }

    /** A change that does not validate: the operator's own rule, or another rule the store already holds broken. */
    private RuleChange refused(String id, RuntimeRules latest, InvalidLimitException ex) {
        String broken = brokenRule(latest);
        if (broken != null && !broken.equals(id)) {
            return RuleChange.refused(Outcome.CONFLICT, "rule_store_invalid", ex.setting(),
                    "The rule store holds rule '" + broken
                    + "', which does not validate: " + ex.getMessage() + " Fix or delete that rule first.");
        }
        return RuleChange.refused(Outcome.INVALID, "invalid_rule", ex.setting(), ex.getMessage());
    }

    /** The id of a stored rule that does not validate on its own, or null. */
    private String brokenRule(RuntimeRules latest) {
        try {
            sync.validate(latest);
            return null;
        }
        catch (InvalidLimitException ex) {
            for (String stored : latest.specs().keySet()) {
                if (ex.setting() != null && ex.setting().startsWith("ratelimit.rules." + stored + ".")
                        || ex.setting() != null && ex.setting().equals("ratelimit.rules." + stored)) {
                    return stored;
                }
            }
            return "(unknown)";
        }
    }

    /**
     * A write that did not answer. Only a failure before the write was sent means nothing changed; a timeout (Redis
     * paused, slow, or the connection lost meanwhile) may come after the store took it, or the command may still be
     * on its way and be applied when the store answers again. Telling the operator "nothing changed" then would be
     * wrong exactly when it matters: a kill switch said to have failed would come on later, unannounced.
     */
    private static RuleChange notWritten(RuntimeException ex) {
        if (ex instanceof RuleStore.NotSentException) {
            return unavailable(ex);
        }
        return RuleChange.refused(Outcome.UNAVAILABLE, OUTCOME_UNKNOWN, null,
                "The rule store did not answer the write (" + ex.getMessage() + "): the change may or may not have "
                + "been applied, now or when the store answers again. Read the current rules and switches before "
                + "retrying.");
    }

    private static RuleChange unavailable(RuntimeException ex) {
        return RuleChange.refused(Outcome.UNAVAILABLE, "rule_store_unavailable", null,
                "The rule store could not be reached ("
                + ex.getMessage() + "); nothing changed.");
    }

    public RuleSet rulesInForce() {
        return sync.rulesInForce();
    }

    @SuppressWarnings("unchecked")
    private static void flatten(String name, Object value, Map<String, String> spec) {
        if (value instanceof Map<?, ?> map) {
            ((Map<String, Object>) map).forEach((child, childValue) -> flatten(name + "." + child, childValue, spec));
        }
        else if (value instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                flatten(name + "[" + i + "]", list.get(i), spec);
            }
        }
        else if (value != null) {
            spec.put(name, String.valueOf(value));
        }
    }
}
