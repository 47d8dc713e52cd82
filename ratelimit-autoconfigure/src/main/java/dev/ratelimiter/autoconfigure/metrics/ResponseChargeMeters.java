package dev.ratelimiter.autoconfigure.metrics;

import java.util.EnumMap;
import java.util.Map;

import dev.ratelimiter.gateway.ResponseCharges;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * How the responses of rules charged from the response ended ({@code ratelimit.response.charges}, tag
 * {@code outcome}: charged, not-reported, error-status, cancelled, store-failed) and the tokens charged after the fact
 * or lost with the store ({@code ratelimit.response.charged.tokens}). Not tagged by rule: the outcome is what an
 * operator watches (an upstream that stopped reporting usage, Redis losing charges), and it has five values.
 */
public final class ResponseChargeMeters implements ResponseCharges.Listener {

    private final Map<ResponseCharges.Outcome, Counter> responses = new EnumMap<>(ResponseCharges.Outcome.class);
    private final Map<ResponseCharges.Outcome, Counter> tokens = new EnumMap<>(ResponseCharges.Outcome.class);

    public ResponseChargeMeters(MeterRegistry registry) {
        for (ResponseCharges.Outcome outcome : ResponseCharges.Outcome.values()) {
            responses.put(outcome, Counter.builder("ratelimit.response.charges").tag("outcome", outcome.label())
                    .baseUnit("responses").description("Responses of rules charged from the response, by how the "
                            + "charge ended").register(registry));
            tokens.put(outcome, Counter.builder("ratelimit.response.charged.tokens").tag("outcome", outcome.label())
                    .baseUnit("tokens").description("Tokens charged after the response beyond the minimum spent up "
                            + "front (store-failed: lost)").register(registry));
        }
    }

    @Override
    public void onResponseCharge(String rule, ResponseCharges.Outcome outcome, double charged) {
        responses.get(outcome).increment();
        if (charged > 0) {
            tokens.get(outcome).increment(charged);
        }
    }
}
