package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What of a rule store's rules can be put in force when they do not validate together. Every stored rule that
 * validates on its own is kept, a broken one keeps its last good version (if this instance saw one) — so an instance
 * started now does not lose the valid runtime rules — and the switches are the store's latest: the last rungs of the
 * rollback ladder (kill switch, tier enforcement) must work whatever state the rules are in. Rules that conflict only
 * together are added one by one ({@link #validTogether}).
 *
 * @param runtime the runtime rules kept, with the store's version and switches
 * @param ruleSet the rule set they make
 * @param broken the ids of the stored rules not applied as stored
 */
record ValidRuntimeRules(RuntimeRules runtime, RuleSet ruleSet, List<String> broken) {

    /**
     * @param loaded what the store holds
     * @param lastGood the runtime rules in force until now
     */
    static ValidRuntimeRules of(RuntimeRules loaded, RuntimeRules lastGood, RuleSetFactory factory) {
        Map<String, Map<String, String>> usable = new LinkedHashMap<>();
        List<String> broken = new ArrayList<>();
        loaded.specs().forEach((id, spec) -> {
            try {
                factory.create(new RuntimeRules(loaded.version(), Map.of(id, spec), Map.of()));
                usable.put(id, spec);
            }
            catch (InvalidLimitException alone) {
                broken.add(id);
                Map<String, String> lastGoodSpec = lastGood.specs().get(id);
                if (lastGoodSpec != null) {
                    usable.put(id, lastGoodSpec);
                }
            }
        });
        RuntimeRules effective = new RuntimeRules(loaded.version(), usable, loaded.control());
        RuleSet ruleSet;
        try {
            ruleSet = factory.create(effective);
        }
        catch (InvalidLimitException together) {
            effective = new RuntimeRules(loaded.version(), validTogether(usable, broken, lastGood, factory),
                    loaded.control());
            ruleSet = factory.create(effective);
        }
        return new ValidRuntimeRules(effective, ruleSet, broken);
    }

    /**
     * Rules that each validate but not all together (two in one group with the same match, written by hand): the last
     * good ones first, which validated together before, then the others by id, each only if the set still validates
     * with it. An instance started now, without a last good set, still keeps every rule it can.
     */
    private static Map<String, Map<String, String>> validTogether(Map<String, Map<String, String>> usable,
            List<String> broken, RuntimeRules lastGood, RuleSetFactory factory) {
        Map<String, Map<String, String>> chosen = new LinkedHashMap<>();
        lastGood.specs().forEach((id, spec) -> {
            if (spec.equals(usable.get(id))) {
                chosen.put(id, spec);
            }
        });
        if (!validates(chosen, factory)) {
            chosen.clear();
        }
        // By id, not in the store's (hash) order: every instance without a last good set makes the same choice.
        new TreeMap<>(usable).forEach((id, spec) -> {
            if (chosen.containsKey(id)) {
                return;
            }
            chosen.put(id, spec);
            if (!validates(chosen, factory)) {
                chosen.remove(id);
                broken.add(id);
                Map<String, String> lastGoodSpec = lastGood.specs().get(id);
                if (lastGoodSpec != null && !lastGoodSpec.equals(spec)) {
                    chosen.put(id, lastGoodSpec);
                    if (!validates(chosen, factory)) {
                        chosen.remove(id);
                    }
                }
            }
        });
        return chosen;
    }

    private static boolean validates(Map<String, Map<String, String>> specs, RuleSetFactory factory) {
        try {
            factory.create(new RuntimeRules(0, specs, Map.of()));
            return true;
        }
        catch (InvalidLimitException ex) {
            return false;
        }
    }
}
