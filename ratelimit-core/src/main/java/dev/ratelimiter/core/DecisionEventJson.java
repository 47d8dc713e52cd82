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
        JsonText.field(json, "time", event.time().toString());
        JsonText.field(json, "client", event.client());
        JsonText.field(json, "tier", event.tier());
        JsonText.field(json, "route", event.route());
        JsonText.field(json, "routeClass", event.routeClass());
        JsonText.field(json, "verdict", event.verdict().name().toLowerCase(Locale.ROOT));
        JsonText.field(json, "reason", event.reason());
        JsonText.field(json, "source", event.source());
        JsonText.field(json, "rule", event.rule());
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
        JsonText.field(json, "priority", event.priority());
        JsonText.field(json, "upstream", event.upstream());
        JsonText.field(json, "instance", event.instance());
        JsonText.field(json, "region", event.region());
        if (event.abuseFactor() != null) {
            // Rounded as the evaluator rounds it (hundredths): the factor the limits were scaled by.
            json.append(",\"abuseFactor\":").append(AbuseScaling.hundredths(event.abuseFactor()) / 100.0);
        }
        return json.append('}').toString();
    }
}
