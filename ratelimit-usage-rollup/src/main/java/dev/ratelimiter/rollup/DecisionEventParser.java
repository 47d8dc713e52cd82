package dev.ratelimiter.rollup;

import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * Turns a decision record's value into a {@link DecisionEvent}, or into nothing when the rollup cannot or should not
 * count it.
 *
 * <p>Parsing happens here, inside the topology, rather than in a value deserializer: a deserializer that throws
 * stops the stream thread unless a global exception handler is configured, while returning nothing simply drops the
 * record. One bad producer must not stop the rollup for everyone.
 */
final class DecisionEventParser {

    static final int SCHEMA = 1;

    private static final Logger log = LoggerFactory.getLogger(DecisionEventParser.class);

    Optional<DecisionEvent> parse(byte[] value) {
        if (value == null || value.length == 0) {
            return Optional.empty();
        }
        JsonNode json;
        try {
            json = Json.MAPPER.readTree(value);
        }
        catch (JacksonException ex) {
            log.warn("Skipping a decision record that is not JSON: {}", ex.getOriginalMessage());
            return Optional.empty();
        }
        if (json == null || !json.isObject()) {
            log.warn("Skipping a decision record that is not a JSON object");
            return Optional.empty();
        }
        JsonNode schema = json.get("schema");
        if (schema != null && !(schema.canConvertToInt() && schema.asInt() == SCHEMA)) {
            // A later schema may change what fields mean; counting it as schema 1 could be silently wrong.
            log.debug("Skipping a decision event of schema {}", schema);
            return Optional.empty();
        }
        String client = text(json, "client");
        if (client == null || client.isEmpty()) {
            // A request without an API key: there is no client to roll it up under.
            return Optional.empty();
        }
        return Optional.of(new DecisionEvent(client, text(json, "tier"),
                Verdict.fromWireName(text(json, "verdict")), text(json, "rule"), limit(json), abuseFactor(json)));
    }

    private static long limit(JsonNode json) {
        JsonNode node = json.get("limit");
        return node != null && node.isIntegralNumber() && node.canConvertToLong() && node.asLong() >= 0
                ? node.asLong() : -1;
    }

    /** An absent or unusable factor is 1: the limits were whole (the field is written only when they were not). */
    private static double abuseFactor(JsonNode json) {
        JsonNode node = json.get("abuseFactor");
        if (node == null || !node.isNumber()) {
            return 1;
        }
        double factor = node.asDouble();
        return factor > 0 && factor <= 1 ? factor : 1;
    }

    private static String text(JsonNode json, String field) {
        JsonNode node = json.get(field);
        return (node != null && node.isString()) ? node.stringValue() : null;
    }
}
