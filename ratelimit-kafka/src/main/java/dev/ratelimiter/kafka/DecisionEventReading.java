package dev.ratelimiter.kafka;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.ratelimiter.core.DecisionEvent;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a decision event back from the JSON {@link dev.ratelimiter.core.DecisionEventJson} writes, with what a replay
 * needs: fields it does not know are ignored (the schema only grows within a version), absent ones are null (or -1),
 * and a value that is not an event of schema 1 is null, for the reader to count rather than to stop at. A range may
 * hold hundreds of thousands of events, all held until they are sorted: each rule's result ({@code rules}) is left
 * out, and the few distinct values of the text fields (clients, tiers, routes, regions) are shared between events.
 */
final class DecisionEventReading {

    private static final JsonMapper json = JsonMapper.builder().build();

    private DecisionEventReading() {
    }

    static DecisionEvent parse(String value, Map<String, String> shared) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        try {
            JsonNode event = json.readTree(value);
            if (event == null || !event.isObject()) {
                return null;
            }
            JsonNode schema = event.get("schema");
            String time = text(event, "time");
            String verdict = text(event, "verdict");
            if (schema == null || schema.asInt() != DecisionEvent.SCHEMA || time == null || verdict == null) {
                return null;
            }
            return new DecisionEvent(Instant.parse(time), text(event, "client", shared), text(event, "tier", shared),
                    text(event, "route", shared), text(event, "routeClass", shared),
                    DecisionEvent.Verdict.valueOf(verdict.toUpperCase(Locale.ROOT)), text(event, "reason", shared),
                    text(event, "source", shared), text(event, "rule", shared), event.path("limit").asLong(-1),
                    event.path("remaining").asLong(-1), List.of(), text(event, "priority", shared),
                    text(event, "upstream", shared), text(event, "instance", shared), text(event, "region", shared),
                    abuseFactor(event));
        }
        catch (JacksonException | IllegalArgumentException | java.time.DateTimeException ex) {
            return null;
        }
    }

    /** The factor an abuse score scaled the client's limits by, or null (whole): what a replay lowers its rule by. */
    private static Double abuseFactor(JsonNode node) {
        JsonNode value = node.get("abuseFactor");
        if (value == null || !value.isNumber()) {
            return null;
        }
        double factor = value.asDouble();
        return factor > 0 && factor < 1 ? factor : null;
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value != null && value.isString() ? value.stringValue() : null;
    }

    /**
     * Longest text field an event may carry: a client id is 22 characters, rule and route ids and reasons a few dozen.
     * A longer one is no event a gateway wrote (a forged record): malformed, so that {@code max-events} also bounds the
     * memory a replay holds.
     */
    static final int LONGEST_FIELD = 1_024;

    private static String text(JsonNode node, String field, Map<String, String> shared) {
        String value = text(node, field);
        if (value != null && value.length() > LONGEST_FIELD) {
            throw new IllegalArgumentException(field + " is " + value.length() + " characters long");
        }
        return value == null ? null : shared.computeIfAbsent(value, v -> v);
    }
}
