package dev.ratelimiter.core;

import java.util.Set;

/**
 * What a rule change requires of the rules it is made on: HTTP's {@code If-Match} and {@code If-None-Match} in the
 * core's own terms. {@link RuleAdmin} checks it against the store's latest rules and writes only if the store is still
 * at the version it checked, so a condition that held when checked still holds when the change lands: two writers
 * sending the same version cannot both win, and nobody's change is lost under another's.
 *
 * @param versions the rule set versions the writer read (any of them will do); empty for any version
 * @param presence whether the rule must exist, must not, or either
 */
public record WriteCondition(Set<Long> versions, Presence presence) {

    /** Whether the rule (runtime or configured) must exist. */
    public enum Presence {
        EITHER, PRESENT, ABSENT
    }

    /** No condition: the change is validated against the latest rules, whatever they are (the actuator's writes). */
    public static final WriteCondition NONE = new WriteCondition(Set.of(), Presence.EITHER);

    public WriteCondition {
        versions = Set.copyOf(versions);
    }

    /** The rule exists and the rules are at one of these versions ({@code If-Match: "17"}). */
    public static WriteCondition atVersion(Set<Long> versions) {
        return new WriteCondition(versions, Presence.PRESENT);
    }

    /** The rule exists, at any version ({@code If-Match: *}). */
    public static WriteCondition present() {
        return new WriteCondition(Set.of(), Presence.PRESENT);
    }

    /** The rule does not exist yet ({@code If-None-Match: *}): create, never replace. */
    public static WriteCondition absent() {
        return new WriteCondition(Set.of(), Presence.ABSENT);
    }

    /** Why the condition does not hold on {@code latest}, or null when it holds. */
    String unmet(String id, long latest, boolean exists) {
        if (presence == Presence.PRESENT && !exists) {
            return "There is no rule '" + id + "' to replace; create it with If-None-Match: *.";
        }
        if (presence == Presence.ABSENT && exists) {
            return "Rule '" + id + "' exists already (If-None-Match: * creates only).";
        }
        if (!versions.isEmpty() && !versions.contains(latest)) {
            return "The rules are at version " + latest + ", not " + (versions.size() == 1
                    ? versions.iterator().next() : versions) + ": they changed since they were read. Read the rule "
                    + "again and send its new version.";
        }
        return null;
    }
}
