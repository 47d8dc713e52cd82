package dev.ratelimiter.rollup;

import java.util.Map;
import java.util.TreeMap;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The JSON fields of an {@link HourlyUsage}, named as in the rollup record (src/docs/decision-events.md), shared by
 * the output record and the window store so that the two cannot drift apart.
 */
final class HourlyUsageJson {

    private HourlyUsageJson() {
    }

    /** Writes {@code tier} if known; absent values are left out rather than written as null, as in the events. */
    static void writeTier(ObjectNode target, HourlyUsage usage) {
        if (usage.tier() != null) {
            target.put("tier", usage.tier());
        }
    }

    static void writeCounts(ObjectNode target, HourlyUsage usage) {
        target.put("requests", usage.requests());
        target.put("allowed", usage.allowed());
        target.put("denied", usage.denied());
        target.put("shadowDenied", usage.shadowDenied());
        ObjectNode byRule = target.putObject("deniedByRule");
        usage.deniedByRule().forEach(byRule::put);
    }

    static HourlyUsage read(JsonNode json) {
        Map<String, Long> deniedByRule = new TreeMap<>();
        JsonNode byRule = json.path("deniedByRule");
        for (Map.Entry<String, JsonNode> entry : byRule.properties()) {
            deniedByRule.put(entry.getKey(), entry.getValue().asLong());
        }
        JsonNode tier = json.get("tier");
        return new HourlyUsage((tier != null && tier.isString()) ? tier.stringValue() : null,
                json.path("requests").asLong(), json.path("allowed").asLong(), json.path("denied").asLong(),
                json.path("shadowDenied").asLong(), deniedByRule);
    }
}
