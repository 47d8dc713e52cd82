package dev.ratelimiter.rollup;

import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import tools.jackson.databind.node.ObjectNode;

/**
 * How the window store (and its changelog topic) keeps an {@link HourlyUsage}: the rollup record's own JSON fields,
 * so the changelog reads like the output when someone has to look at it.
 */
final class HourlyUsageSerde extends Serdes.WrapperSerde<HourlyUsage> {

    HourlyUsageSerde() {
        super(usageSerializer(), usageDeserializer());
    }

    private static Serializer<HourlyUsage> usageSerializer() {
        return (topic, usage) -> {
            if (usage == null) {
                return null;
            }
            ObjectNode json = Json.MAPPER.createObjectNode();
            HourlyUsageJson.writeTier(json, usage);
            HourlyUsageJson.writeCounts(json, usage);
            return Json.MAPPER.writeValueAsBytes(json);
        };
    }

    private static Deserializer<HourlyUsage> usageDeserializer() {
        return (topic, bytes) -> (bytes == null) ? null : HourlyUsageJson.read(Json.MAPPER.readTree(bytes));
    }
}
