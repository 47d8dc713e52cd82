package dev.ratelimiter.autoconfigure.rules;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The rules API's nested rule document, turned into the settings {@link dev.ratelimiter.core.RuleAdmin} takes from
 * the actuator's flat form too: the same names, so the same validation and the same stored spec. Only the document's
 * shape is checked here (which members exist, what type each holds); whether the values make a rule is
 * RuleAdmin's to say. A member no rule has is refused by name, so that a typo cannot silently drop a limit.
 */
final class RuleDocument {

    /** Longest string accepted in any member: far above any real id, pattern or hashed key, far below a body cap. */
    static final int MAX_STRING = 1024;

    static final Set<String> SCALARS = Set.of("group", "algorithm", "capacity", "refillTokens", "refillPeriod",
            "limit", "window", "maxInProgress", "lease", "cost", "mode", "failureMode", "storeMode", "shards",
            "whenMissing", "scope", "enabled", "period", "zone", "anchorDay", "weekStart", "costExpression", "maxCost",
            "fallbackCost");
    static final Set<String> CHARGE_FROM_RESPONSE = Set.of("header", "jsonField", "minimum");
    static final Set<String> MATCH = Set.of("routeIds", "paths", "routeClasses", "tiers", "apiKeys");
    /** The seeds' names for our settings: a document may use either, not both. */
    static final Map<String, String> ALIASES = Map.of("dimension", "key", "burst", "capacity", "match.routes",
            "match.routeIds");
    /** What a read answers besides the settings: sent back with a rule read from the API, they are ignored. */
    static final Set<String> READ_ONLY = Set.of("id", "source");

    /** A member of the document that is not of a rule's shape; {@code field} names it ({@code match.tiers[1]}). */
    static final class ShapeException extends RuntimeException {

        final @Nullable String field;

        ShapeException(@Nullable String field, String message) {
            super(message);
            this.field = field;
        }
    }

    private RuleDocument() {
    }

    /** The settings of a rule document (a JSON object) for the rule {@code id}; refuses a member of another shape. */
    static Map<String, Object> settings(String id, JsonNode document) {
        if (!document.isObject()) {
            throw new ShapeException(null, "A rule document is a JSON object, not " + kind(document) + ".");
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> member : document.properties()) {
            String name = member.getKey();
            JsonNode value = member.getValue();
            if (READ_ONLY.contains(name)) {
                if (name.equals("id") && !value.isNull() && !(value.isString() && value.stringValue().equals(id))) {
                    throw new ShapeException("id", "id is the rule's id in the path ('" + id + "'), if given.");
                }
                continue;
            }
            String setting = ALIASES.getOrDefault(name, name);
            if (value.isNull()) {
                continue; // absent: what a read shows for a setting left at its default
            }
            if (settings.containsKey(setting)) {
                throw new ShapeException(name, name + " and " + setting + " are the same setting: give one.");
            }
            if (setting.equals("match")) {
                settings.put("match", match(value));
            }
            else if (setting.equals("chargeFromResponse")) {
                settings.put(setting, chargeFromResponse(value));
            }
            else if (setting.equals("key")) {
                settings.put("key", value.isArray() ? strings(name, value) : scalar(name, value));
            }
            else if (SCALARS.contains(setting)) {
                settings.put(setting, scalar(name, value));
            }
            else {
                throw new ShapeException(name, name + " is not a rule setting (a misspelt or unknown name); nothing "
                        + "was written.");
            }
        }
        return settings;
    }

    private static Map<String, Object> chargeFromResponse(JsonNode charge) {
        if (!charge.isObject()) {
            throw new ShapeException("chargeFromResponse", "chargeFromResponse is an object ({\"jsonField\": "
                    + "\"usage.total_tokens\", \"minimum\": 1}), not " + kind(charge) + ".");
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> member : charge.properties()) {
            String field = "chargeFromResponse." + member.getKey();
            if (!CHARGE_FROM_RESPONSE.contains(member.getKey())) {
                throw new ShapeException(field, field + " is not a setting of chargeFromResponse (header, jsonField, "
                        + "minimum); nothing was written.");
            }
            if (!member.getValue().isNull()) {
                settings.put(member.getKey(), scalar(field, member.getValue()));
            }
        }
        return settings;
    }

    private static Map<String, Object> match(JsonNode match) {
        if (!match.isObject()) {
            throw new ShapeException("match", "match is an object of criteria ({\"tiers\": [\"free\"]}), not "
                    + kind(match) + ".");
        }
        Map<String, Object> criteria = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> member : match.properties()) {
            String field = "match." + member.getKey();
            String criterion = ALIASES.getOrDefault(field, field).substring(6);
            JsonNode value = member.getValue();
            if (!MATCH.contains(criterion)) {
                throw new ShapeException(field, field + " is not a match criterion (" + String.join(", ",
                        MATCH.stream().sorted().toList()) + "); nothing was written.");
            }
            if (criteria.containsKey(criterion)) {
                throw new ShapeException(field, field + " and match." + criterion + " are the same criterion: "
                        + "give one.");
            }
            if (!value.isNull()) {
                criteria.put(criterion, value.isArray() ? strings(field, value) : scalar(field, value));
            }
        }
        return criteria;
    }

    private static List<String> strings(String field, JsonNode array) {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < array.size(); i++) {
            JsonNode item = array.get(i);
            if (!item.isString()) {
                throw new ShapeException(field + "[" + i + "]", field + "[" + i + "] must be a string, not "
                        + kind(item) + ".");
            }
            values.add(bounded(field + "[" + i + "]", item.stringValue()));
        }
        return values;
    }

    private static String scalar(String field, JsonNode value) {
        if (value.isString()) {
            return bounded(field, value.stringValue());
        }
        if (value.isNumber()) {
            return String.valueOf(value.numberValue());
        }
        if (value.isBoolean()) {
            return String.valueOf(value.booleanValue());
        }
        throw new ShapeException(field, field + " must be a string, a number or a boolean, not " + kind(value) + ".");
    }

    private static String bounded(String field, String value) {
        if (value.length() > MAX_STRING) {
            throw new ShapeException(field, field + " is " + value.length() + " characters long; at most "
                    + MAX_STRING + " are accepted.");
        }
        return value;
    }

    private static String kind(JsonNode value) {
        return value.isObject() ? "an object" : value.isArray() ? "an array" : value.isString() ? "a string"
                : value.isNumber() ? "a number" : value.isBoolean() ? "a boolean" : "null";
    }

    /**
     * The document's name for a setting RuleAdmin refused ({@code ratelimit.rules.acme.match.api-keys[0]} to
     * {@code match.apiKeys[0]}, under the alias the document used); a setting of another rule stays as it is.
     */
    static String field(String id, String setting, JsonNode document) {
        String prefix = "ratelimit.rules." + id + ".";
        if (setting == null || !setting.startsWith(prefix)) {
            return setting;
        }
        StringBuilder camel = new StringBuilder();
        boolean upper = false;
        for (char c : setting.substring(prefix.length()).toCharArray()) {
            if (c == '-') {
                upper = true;
                continue;
            }
            camel.append(upper ? Character.toUpperCase(c) : c);
            upper = false;
        }
        String name = camel.toString();
        for (Map.Entry<String, String> alias : ALIASES.entrySet()) {
            String canonical = alias.getValue();
            if ((name.equals(canonical) || name.startsWith(canonical + "[") || name.startsWith(canonical + "."))
                    && sent(document, alias.getKey())) {
                return alias.getKey() + name.substring(canonical.length());
            }
        }
        return name;
    }

    private static boolean sent(JsonNode document, String dotted) {
        JsonNode node = document;
        for (String part : dotted.split("\\.")) {
            node = node == null ? null : node.get(part);
        }
        return node != null && !node.isNull();
    }
}
