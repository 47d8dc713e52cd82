package dev.ratelimiter.autoconfigure.rules;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import dev.ratelimiter.kafka.DecisionEventRange;

/** {@link WhatIfEvents} from the decision-event topic; loaded only where the Kafka client is on the class path. */
final class KafkaWhatIfEvents implements WhatIfEvents {

    private final DecisionEventRange range;

    KafkaWhatIfEvents(String bootstrapServers, String topic) {
        this.range = new DecisionEventRange(bootstrapServers, topic, Map.of());
    }

    @Override
    public Recorded read(Instant from, Instant to, long maxEvents, Duration within) {
        try {
            DecisionEventRange.Read read = range.read(from, to, maxEvents, within);
            return new Recorded(read.events(), read.malformed());
        }
        catch (DecisionEventRange.TooMany ex) {
            throw new TooMany(ex.getMessage());
        }
        catch (DecisionEventRange.Unavailable ex) {
            throw new Unavailable(ex.getMessage(), ex);
        }
    }
}
