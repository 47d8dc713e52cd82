package dev.ratelimiter.kafka;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.ratelimiter.core.AbuseScore;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The value of an abuse-score record, on the topic and in the rules API:
 * {@code {"score":0.8,"source":"rollup","at":1767225600000,"expires":1767229200000}} — {@code score} 0..1 or
 * {@code factor} (0..1], {@code at} and {@code expires} epoch milliseconds or ISO-8601 instants, {@code source} a
 * name. Anything else is refused with a message naming the field.
 */
public final class AbuseScoreJson {

    private static final JsonMapper json = JsonMapper.builder().build();

    private AbuseScoreJson() {
    }

    /**
     * Reads a record; {@code defaultAt} stands for a missing {@code at} (the record's own timestamp on the topic: a
     * record read back after a restart must decay from when it was written, not from now).
     *
     * @throws IllegalArgumentException what is wrong with it, for a log line or a 400
     */
    public static AbuseScore read(String value, Instant defaultAt) {
        JsonNode record;
        try {
            record = json.readTree(value);
        }
        catch (RuntimeException ex) {
            throw new IllegalArgumentException("not JSON");
        }
        if (record == null || !record.isObject()) {
            throw new IllegalArgumentException("not a JSON object");
        }
        Instant at = instant(record, "at");
        JsonNode source = record.get("source");
        if (source != null && !source.isNull() && !source.isString()) {
            throw new IllegalArgumentException("source is not a string");
        }
        return new AbuseScore(number(record, "score"), number(record, "factor"),
                source == null || source.isNull() ? null : source.stringValue(), at != null ? at : defaultAt,
                instant(record, "expires"));
    }

    /** Writes a record as {@link #read} reads it. */
    public static String write(AbuseScore score) {
        Map<String, Object> fields = new LinkedHashMap<>();
        if (score.score() != null) {
            fields.put("score", score.score());
        }
        if (score.factor() != null) {
            fields.put("factor", score.factor());
        }
        fields.put("source", score.source());
        fields.put("at", score.at().toEpochMilli());
        if (score.expires() != null) {
            fields.put("expires", score.expires().toEpochMilli());
        }
        return json.writeValueAsString(fields);
    }

    private static Double number(JsonNode record, String field) {
        JsonNode node = record.get(field);
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isNumber()) {
            throw new IllegalArgumentException(field + " is not a number");
        }
        return node.asDouble();
    }

    private static Instant instant(JsonNode record, String field) {
        JsonNode node = record.get(field);
        if (node == null || node.isNull()) {
            return null;
        }
        try {
            if (node.isIntegralNumber() && node.canConvertToLong()) {
                return Instant.ofEpochMilli(node.asLong());
            }
            if (node.isString()) {
                return Instant.parse(node.stringValue());
            }
        }
        catch (RuntimeException ex) {
            // out of Instant's range, or not ISO-8601: the message below
        }
        throw new IllegalArgumentException(field + " is not epoch milliseconds or an ISO-8601 instant");
    }
}
