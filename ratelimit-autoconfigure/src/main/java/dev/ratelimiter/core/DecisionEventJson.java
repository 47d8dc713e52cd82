package dev.ratelimiter.core;

import java.util.Locale;

/**
 * Writes a {@link DecisionEvent} as one line of JSON. By hand rather than through a mapper: the core stays free of
 * framework dependencies, and the field order and names are the schema, visible in one place.
 */
public final class DecisionEventJson {

    private DecisionEventJson() {
    }

    public static String write(DecisionEvent event) {
        StringBuilder json = new StringBuilder(384);
        json.append("{\"schema\":").append(DecisionEvent.SCHEMA);
        field(json, "time", event.time().toString());
        field(json, "client", event.client());
        field(json, "tier", event.tier());
        field(json, "route", event.route());
        field(json, "routeClass", event.routeClass());
        field(json, "verdict", event.verdict().name().toLowerCase(Locale.ROOT));
        field(json, "reason", event.reason());
        field(json, "source", event.source());
        field(json, "rule", event.rule());
        if (event.limit() >= 0) {
            json.append(",\"limit\":").append(event.limit());
        }
        if (event.remaining() >= 0) {
            json.append(",\"remaining\":").append(event.remaining());
        }
        json.append(",\"rules\":[");
        for (int i = 0; i < event.rules().size(); i++) {
            DecisionEvent.RuleResult rule = event.rules().get(i);
            json.append(i == 0 ? "{" : ",{");
            json.append("\"id\":");
            JsonText.quote(json, rule.id());
            json.append(",\"allowed\":").append(rule.allowed()).append(",\"remaining\":").append(rule.remaining())
                    .append(",\"shadow\":").append(rule.shadow()).append('}');
        }
        json.append(']');
        field(json, "priority", event.priority());
        field(json, "upstream", event.upstream());
        field(json, "instance", event.instance());
        field(json, "region", event.region());
        return json.append('}').toString();
    }

    private static void field(StringBuilder json, String name, String value) {
        if (value != null) {
            json.append(",\"").append(name).append("\":");
            JsonText.quote(json, value);
        }
    }
}
