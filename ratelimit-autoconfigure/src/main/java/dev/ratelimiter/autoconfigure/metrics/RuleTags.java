package dev.ratelimiter.autoconfigure.metrics;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;

import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;

/**
 * What the {@code rule} tag of a meter says for a rule, so that the tag's values stay as few as the configuration
 * makes them: a rule of {@code application.yml} by its id (or its group), a runtime rule — one per customer override,
 * posted at any time — by its group when a configured rule competes in that group (an override of a tier's limits, in
 * {@code tier-default}), else as {@link #RUNTIME}. Listed ids keep their own value whatever they are.
 *
 * <p>Which values are live follows the rule set in force ({@link #update}): a value no rule in force has any more is
 * the cue to remove its meters.
 */
public final class RuleTags {

    /** The tag of a decision no rule limited. */
    public static final String NONE = "none";

    /** The tag of a runtime rule in no configured rule's group (under {@link By#GROUP}). */
    public static final String RUNTIME = "runtime";

    /** What a rule's tag value is. */
    public enum By {
        /** The rule's own id. */
        ID,
        /** The rule's group (for a runtime rule: when a configured rule is in it, else {@value #RUNTIME}). */
        GROUP
    }

    private final By configured;
    private final By runtime;
    private final Set<String> keptIds;
    private final Predicate<String> isConfigured;
    private final Supplier<RuleSet> rules;
    private volatile Snapshot snapshot;

    /** The tags of the rules of one rule set, and the groups its configured rules are in. */
    private record Snapshot(Map<String, String> byId, Set<String> configuredGroups, Set<String> live) {
    }

    /**
     * @param configured what a configured rule (application.yml, a tier's limits) is tagged by
     * @param runtime what a runtime rule (the rules API, the rule store) is tagged by
     * @param keptIds rule ids tagged by their id whatever else applies
     * @param isConfigured whether a rule id is defined in configuration
     * @param rules the rule set in force
     */
    public RuleTags(By configured, By runtime, Set<String> keptIds, Predicate<String> isConfigured,
            Supplier<RuleSet> rules) {
        this.configured = configured;
        this.runtime = runtime;
        this.keptIds = Set.copyOf(keptIds);
        this.isConfigured = isConfigured.or(RuleSet.UNKNOWN_KEYS::equals);
        this.rules = rules;
        this.snapshot = snapshotOf(rules.get());
    }

    /** The tag of a rule: of the rule set in force, or, for a rule just replaced, as that set would tag it. */
    public String of(Rule rule) {
        Snapshot now = snapshot;
        String tag = now.byId().get(rule.id());
        return tag != null ? tag : tagOf(rule, now.configuredGroups());
    }

    /** Whether a rule of the set in force has this tag ({@link #NONE} always is). */
    public boolean isLive(String tag) {
        return snapshot.live().contains(tag);
    }

    /**
     * Takes the rule set in force now. Read here, under the lock, rather than passed: of two changes told at once, the
     * one told last then never puts the older set back.
     */
    public synchronized void update() {
        snapshot = snapshotOf(rules.get());
    }

    private Snapshot snapshotOf(RuleSet rules) {
        Set<String> groups = new HashSet<>();
        for (Rule rule : rules.rules().values()) {
            if (isConfigured.test(rule.id())) {
                groups.add(rule.group());
            }
        }
        Map<String, String> byId = new HashMap<>();
        for (Rule rule : rules.rules().values()) {
            byId.put(rule.id(), tagOf(rule, groups));
        }
        Set<String> live = new HashSet<>(byId.values());
        live.add(NONE);
        return new Snapshot(Map.copyOf(byId), Set.copyOf(groups), Set.copyOf(live));
    }

    private String tagOf(Rule rule, Set<String> configuredGroups) {
        if (keptIds.contains(rule.id())) {
            return rule.id();
        }
        if (isConfigured.test(rule.id())) {
            return configured == By.ID ? rule.id() : rule.group();
        }
        if (runtime == By.ID) {
            return rule.id();
        }
        return configuredGroups.contains(rule.group()) ? rule.group() : RUNTIME;
    }
}
