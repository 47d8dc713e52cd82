package dev.ratelimiter.autoconfigure.metrics;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.FallbackReason;
import dev.ratelimiter.core.StoreMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Store health in Micrometer: {@code ratelimit.store.calls} (timer, by outcome: success, error, timeout,
 * rejected), {@code ratelimit.fallback.decisions} (by failure mode and reason: timeout, max-wait, breaker-open,
 * not-connected, error, stale-shares) and {@code ratelimit.fallback.time} (seconds
 * spent deciding without the store, counted from the first fallback decision to the next successful store call).
 */
public final class MicrometerStoreMetrics implements StoreMetrics {

    private final Map<Outcome, Timer> calls = new EnumMap<>(Outcome.class);
    private final Map<FailureMode, Map<FallbackReason, Counter>> fallbacks = new EnumMap<>(FailureMode.class);
    private final AtomicLong fallbackSince = new AtomicLong();
    private final AtomicLong fallbackNanos = new AtomicLong();

    public MicrometerStoreMetrics(MeterRegistry registry) {
        for (Outcome outcome : Outcome.values()) {
            calls.put(outcome, Timer.builder("ratelimit.store.calls").description("Rate-limit store calls, by outcome")
                    .tag("outcome", outcome.name().toLowerCase(Locale.ROOT)).register(registry));
        }
        for (FailureMode mode : FailureMode.values()) {
            Map<FallbackReason, Counter> byReason = new EnumMap<>(FallbackReason.class);
            for (FallbackReason reason : FallbackReason.values()) {
                byReason.put(reason, Counter.builder("ratelimit.fallback.decisions")
                        .description("Rules decided without the store, by failure mode and why the store could not")
                        .baseUnit("decisions")
                        .tag("mode", mode.name().toLowerCase(Locale.ROOT)).tag("reason", reason.label()).register(registry));
            }
            fallbacks.put(mode, byReason);
        }
        FunctionCounter.builder("ratelimit.fallback.time", this, MicrometerStoreMetrics::fallbackSeconds)
                .description("Seconds spent deciding without the store").baseUnit("seconds").register(registry);
    }

    @Override
    public void storeCall(Outcome outcome, Duration latency) {
        calls.get(outcome).record(latency);
        if (outcome == Outcome.SUCCESS) {
            long since = fallbackSince.getAndSet(0);
            if (since != 0) {
                fallbackNanos.addAndGet(System.nanoTime() - since);
            }
        }
    }

    @Override
    public void fallbackDecision(FailureMode mode, FallbackReason reason) {
        fallbacks.get(mode).get(reason).increment();
        fallbackSince.compareAndSet(0, System.nanoTime());
    }

    private double fallbackSeconds() {
        long since = fallbackSince.get();
        long ongoing = since == 0 ? 0 : System.nanoTime() - since;
        return (fallbackNanos.get() + ongoing) / 1e9;
    }
}
