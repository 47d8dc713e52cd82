package dev.ratelimiter.autoconfigure.metrics;

import dev.ratelimiter.autoconfigure.LoadSheddingProperties;
import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.LoadShedders;
import dev.ratelimiter.core.Priority;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;

/** The meters of one upstream's shedder: requests shed per priority, requests in progress, and its limit. */
public final class LoadShedderMeters {

    /** Micrometer's {@code BaseUnits} has no constant for them. */
    private static final String REQUESTS = "requests";

    private LoadShedderMeters() {
    }

    /** The shedders these properties configure, checked, with their meters when there is a registry. */
    public static LoadShedders shedders(LoadSheddingProperties properties, ObjectProvider<MeterRegistry> registries) {
        LoadShedders shedders = LoadShedders.of(properties.settings());
        registries.ifAvailable(registry -> shedders.all().forEach(shedder -> bind(shedder, registry)));
        return shedders;
    }

    static void bind(LoadShedder shedder, MeterRegistry registry) {
        for (Priority priority : Priority.values()) {
            FunctionCounter.builder("ratelimit.shed", shedder, s -> s.shed(priority))
                    .description("Requests shed because the upstream was full").baseUnit(REQUESTS)
                    .tag("upstream", shedder.upstream()).tag("priority", priority.label())
                    .register(registry);
        }
        Gauge.builder("ratelimit.upstream.in.flight", shedder, LoadShedder::inFlight)
                .description("Requests this instance has in progress at the upstream").baseUnit(REQUESTS)
                .tag("upstream", shedder.upstream()).register(registry);
        Gauge.builder("ratelimit.upstream.limit", shedder, LoadShedder::limit)
                .description("The upstream's limit on requests in progress (fixed or learnt)").baseUnit(REQUESTS)
                .tag("upstream", shedder.upstream()).register(registry);
    }
}
