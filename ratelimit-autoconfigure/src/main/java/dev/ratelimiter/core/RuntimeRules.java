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
public record RuntimeRules(long version, Map<String, Map<String, String>> specs, Map<String, String> control) {

    public static final String KILL_SWITCH = "kill-switch";

    public static final RuntimeRules EMPTY = new RuntimeRules(0, Map.of(), Map.of());

    public RuntimeRules {
        specs = Map.copyOf(specs);
        control = Map.copyOf(control);
    }

    public static String enforceKey(String tier) {
        return "tier." + tier + ".enforce";
    }
}
