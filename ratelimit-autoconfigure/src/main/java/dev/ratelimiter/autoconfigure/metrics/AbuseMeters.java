package dev.ratelimiter.autoconfigure.metrics;

import dev.ratelimiter.core.AbuseScores;
import dev.ratelimiter.kafka.AbuseScoreListener;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/** The meters of abuse scores: no client id as a tag (unbounded); how many, and how the topic is read. */
public final class AbuseMeters {

    private AbuseMeters() {
    }

    public static void scores(MeterRegistry registry, AbuseScores scores) {
        Gauge.builder("ratelimit.abuse.clients.scaled", scores, AbuseScores::scaledClients)
                .description("Clients whose limits an abuse score lowers right now").baseUnit("clients")
                .register(registry);
    }

    public static void listener(MeterRegistry registry, AbuseScoreListener listener) {
        FunctionCounter.builder("ratelimit.abuse.records", listener, AbuseScoreListener::applied)
                .tag("result", "applied").description("Abuse-score records applied (tombstones included)")
                .baseUnit("records").register(registry);
        FunctionCounter.builder("ratelimit.abuse.records", listener, AbuseScoreListener::skipped)
                .tag("result", "skipped").description("Abuse-score records skipped as unusable").baseUnit("records")
                .register(registry);
    }
}
