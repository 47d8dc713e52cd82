package dev.ratelimiter.rollup;

import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * One client's conduct in one scoring window ({@link AbuseScoring}): requests decided (allowed or denied by a rule),
 * the admitted ones weighed by their limits' lowering, and the largest whole limit seen.
 * Mutable for the aggregator, like {@link HourlyUsage}.
 */
final class ClientConduct {

    private long requests;
    private double admittedWhole;
    private double largestWholeLimit;

    ClientConduct add(DecisionEvent event) {
        Verdict verdict = event.verdict();
        if (!verdict.countsAsAllowed() && verdict != Verdict.DENIED) {
            return this; // shed, unavailable, unknown: nothing about the client's own conduct
        }
        requests++;
        if (verdict.countsAsAllowed()) {
            admittedWhole += 1 / event.abuseFactor();
        }
        if (event.limit() > 0) {
            largestWholeLimit = Math.max(largestWholeLimit, event.limit() / event.abuseFactor());
        }
        return this;
    }

    long requests() {
        return requests;
    }

    double admittedWhole() {
        return admittedWhole;
    }

    double largestWholeLimit() {
        return largestWholeLimit;
    }

    /** As JSON in the store and its changelog, readable when someone has to look. */
    static Serde<ClientConduct> serde() {
        Serializer<ClientConduct> serializer = (topic, conduct) -> {
            if (conduct == null) {
                return null;
            }
            ObjectNode json = Json.MAPPER.createObjectNode();
            json.put("requests", conduct.requests);
            json.put("admittedWhole", conduct.admittedWhole);
            json.put("largestWholeLimit", conduct.largestWholeLimit);
            return Json.MAPPER.writeValueAsBytes(json);
        };
        Deserializer<ClientConduct> deserializer = (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            JsonNode json = Json.MAPPER.readTree(bytes);
            ClientConduct conduct = new ClientConduct();
            conduct.requests = json.path("requests").asLong();
            conduct.admittedWhole = json.path("admittedWhole").asDouble();
            conduct.largestWholeLimit = json.path("largestWholeLimit").asDouble();
            return conduct;
        };
        return Serdes.serdeFrom(serializer, deserializer);
    }
}
