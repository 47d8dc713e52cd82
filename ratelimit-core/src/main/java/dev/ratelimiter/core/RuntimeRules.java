package dev.ratelimiter.core;

import java.util.Map;

/**
 * What the runtime rule store holds: rule specs and switches as plain strings, exactly as written through the
 * operator API. They are turned into {@link Rule}s (and validated) by whoever reads them.
 *
 * @param version increases with every change; instances compare it to know they are behind
 * @param specs rule id to its settings, as property names relative to the rule ({@code capacity},
 * {@code match.tiers[0]}) and their values
 * @param control switches: {@value #KILL_SWITCH}, and {@code tier.<name>.enforce}
 */
public record RuntimeRules(long version, Map<String, Map<String, String>> specs, Map<String, String> control,
        Map<Part, String> unreadable) {

    public static final String KILL_SWITCH = "kill-switch";

    public static final RuntimeRules EMPTY = new RuntimeRules(0, Map.of(), Map.of());

    /** A part of the store that can be damaged on its own (written by hand, another tool's layout). */
    public enum Part {
        SPECS, CONTROL, VERSION
    }

    /**
     * @param unreadable the parts the store could not read, and what it found there: a reader keeps its last good
     * copy of them ({@code specs} and {@code control} are then empty, {@code version} 0)
     */
    public RuntimeRules {
        specs = Map.copyOf(specs);
        control = Map.copyOf(control);
        unreadable = Map.copyOf(unreadable);
    }

    public RuntimeRules(long version, Map<String, Map<String, String>> specs, Map<String, String> control) {
        this(version, specs, control, Map.of());
    }

    public static String enforceKey(String tier) {
        return "tier." + tier + ".enforce";
    }

    /**
     * The tier of a switch named {@code tier.<tier>.enforce} ({@link #enforceKey}), or null for any other name. The
     * tier is not validated: a name written by hand may hold anything between the dots.
     */
    public static String tierOfEnforceKey(String name) {
        return name.startsWith("tier.") && name.endsWith(".enforce") && name.length() > 13
                ? name.substring(5, name.length() - 8) : null;
    }
}
