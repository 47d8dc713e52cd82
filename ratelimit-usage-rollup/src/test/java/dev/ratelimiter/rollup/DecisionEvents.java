package dev.ratelimiter.rollup;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** Decision events as the gateway writes them (src/docs/decision-events.md, schema 1), for the tests to feed in. */
final class DecisionEvents {

    private DecisionEvents() {
    }

    /** A decision event; {@code rule} may be null, in which case the field is left out as the gateway does. */
    static byte[] event(String client, String tier, String verdict, String rule, Instant time) {
        Map<String, Object> event = new LinkedHashMap<>();
        event.put("schema", 1);
        event.put("time", time.toString());
        if (client != null) {
            event.put("client", client);
        }
        event.put("tier", tier);
        event.put("route", "demo-api");
        event.put("routeClass", "default");
        event.put("verdict", verdict);
        event.put("reason", "evaluated");
        event.put("source", "store");
        if (rule != null) {
            event.put("rule", rule);
            event.put("limit", 10);
            event.put("remaining", 0);
        }
        event.put("instance", "gw-1:4711");
        return Json.MAPPER.writeValueAsBytes(event);
    }

    static byte[] raw(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
