package dev.ratelimiter.autoconfigure.metrics;

import java.time.Clock;
import java.time.Duration;

import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.RegionUsage;
import dev.ratelimiter.kafka.RegionShareListener;
import dev.ratelimiter.kafka.RegionUsagePublisher;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/** The meters of region shares (operator notes, "Several regions, one global limit"). */
public final class RegionMeters {

    private static final String BUCKETS = "buckets";
    private static final String RECORDS = "records";

    private RegionMeters() {
    }

    public static void usage(MeterRegistry registry, RegionUsage usage) {
        Gauge.builder("ratelimit.region.usage.buckets", usage, RegionUsage::keys)
                .description("Global buckets counted this interval").baseUnit(BUCKETS).register(registry);
        FunctionCounter.builder("ratelimit.region.usage.overflow", usage, RegionUsage::overflow)
                .description("Verdicts of global buckets not counted: the count was full").baseUnit("verdicts")
                .register(registry);
    }

    public static void publisher(MeterRegistry registry, RegionUsagePublisher publisher) {
        FunctionCounter.builder("ratelimit.region.usage", publisher, RegionUsagePublisher::sent)
                .tag("result", "sent").description("Usage records Kafka acknowledged").baseUnit(RECORDS).register(registry);
        FunctionCounter.builder("ratelimit.region.usage", publisher, RegionUsagePublisher::failed)
                .tag("result", "failed").description("Usage records Kafka could not take").baseUnit(RECORDS)
                .register(registry);
    }

    public static void shares(MeterRegistry registry, RegionShares shares, RegionShareListener listener,
            Duration staleAfter, Clock clock) {
        Gauge.builder("ratelimit.region.shares.moved", shares, RegionShares::moved)
                .description("Global buckets whose share here is not the default split").baseUnit(BUCKETS)
                .register(registry);
        FunctionCounter.builder("ratelimit.region.shares.evicted", shares, RegionShares::evicted)
                .description("Moved buckets put back on the default split to keep ratelimit.regions.max-keys")
                .baseUnit(BUCKETS).register(registry);
        Gauge.builder("ratelimit.region.shares.stale", shares, s -> s.stale(clock.instant(), staleAfter) ? 1 : 0)
                .description("1 while nothing was heard from the rebalancer for stale-after: the region keeps its "
                        + "last shares").register(registry);
        FunctionCounter.builder("ratelimit.region.shares.records", listener, RegionShareListener::refused)
                .tag("result", "refused").description("Share records skipped as unusable").baseUnit(RECORDS)
                .register(registry);
        FunctionCounter.builder("ratelimit.region.shares.records", listener, RegionShareListener::mismatched)
                .tag("result", "mismatched").description("Share records made under other regions or weights, "
                        + "applied no higher than the default split").baseUnit(RECORDS).register(registry);
        FunctionCounter.builder("ratelimit.region.shares.records", listener, RegionShareListener::applied)
                .tag("result", "applied").description("Share records applied").baseUnit(RECORDS).register(registry);
    }
}
