package dev.ratelimiter.rollup;

import java.time.Instant;

import tools.jackson.databind.node.ObjectNode;

/**
 * The rollup record written to the output topic: "The usage rollup (schema 1)" in src/docs/decision-events.md.
 */
final class UsageRollupRecord {

    static final int SCHEMA = 1;

    private UsageRollupRecord() {
    }

    /** {@code <client>@<hourStart>}: one key per client and hour, so the latest record per key is the total. */
    static String key(String client, Instant hourStart) {
        return client + "@" + hourStart;
    }

    static String value(String client, Instant hourStart, HourlyUsage usage) {
        ObjectNode json = Json.MAPPER.createObjectNode();
        json.put("schema", SCHEMA);
        json.put("client", client);
        HourlyUsageJson.writeTier(json, usage);
        json.put("hourStart", hourStart.toString());
        HourlyUsageJson.writeCounts(json, usage);
        return Json.MAPPER.writeValueAsString(json);
    }
}
