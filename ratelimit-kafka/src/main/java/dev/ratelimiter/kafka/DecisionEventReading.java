package dev.ratelimiter.kafka;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.ratelimiter.core.DecisionEvent;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a decision event back from the JSON {@link dev.ratelimiter.core.DecisionEventJson} writes: fields it does not
 * know are ignored (the schema only grows within a version), absent ones are null (or -1), and a value that is not an
 * event of schema 1 is null, for the reader to count rather than to stop at.
 */
final class DecisionEventReading {

    private static final JsonMapper json = JsonMapper.builder().build();

    private DecisionEventReading() {
    }

    static DecisionEvent parse(String value) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        try {
            JsonNode event = json.readTree(value);
            JsonNode schema = event == null ? null : event.get("schema");
            String time = text(event, "time");
            String verdict = text(event, "verdict");
            if (schema == null || schema.asInt() != DecisionEvent.SCHEMA || time == null || verdict == null) {
                return null;
            }
            List<DecisionEvent.RuleResult> rules = new ArrayList<>();
            JsonNode results = event.get("rules");
            if (results != null && results.isArray()) {
                for (JsonNode rule : results) {
                    rules.add(new DecisionEvent.RuleResult(text(rule, "id"), rule.path("allowed").asBoolean(),
                            rule.path("remaining").asLong(-1), rule.path("shadow").asBoolean()));
                }
            }
            return new DecisionEvent(Instant.parse(time), text(event, "client"), text(event, "tier"),
                    text(event, "route"), text(event, "routeClass"),
                    DecisionEvent.Verdict.valueOf(verdict.toUpperCase(Locale.ROOT)), text(event, "reason"),
                    text(event, "source"), text(event, "rule"), event.path("limit").asLong(-1),
                    event.path("remaining").asLong(-1), rules, text(event, "priority"), text(event, "upstream"),
                    text(event, "instance"), text(event, "region"));
        }
        catch (JacksonException | IllegalArgumentException | java.time.DateTimeException ex) {
            return null;
        }
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value != null && value.isString() ? value.stringValue() : null;
    }
}
