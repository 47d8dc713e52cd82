package dev.ratelimiter.mvc;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.RecentFallbacks;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.testsupport.LimiterProbe;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.springframework.context.ApplicationContext;

/** An MVC gateway's limiter as the saturation tests read it: its fail-safe store and its meters. */
record MvcStoreStackProbe(FailSafeStore failSafe, MeterRegistry meters) implements LimiterProbe {

    static MvcStoreStackProbe of(ApplicationContext context) {
        return new MvcStoreStackProbe(context.getBean(StoreStack.class).failSafe(),
                context.getBean(MeterRegistry.class));
    }

    @Override
    public long decisions() {
        return meters.find("ratelimit.store.calls").timers().stream().mapToLong(Timer::count).sum();
    }

    @Override
    public long fallbackDecisions() {
        return failSafe.fallbackDecisions();
    }

    @Override
    public long fallbackRules(String reason) {
        return (long) meters.find("ratelimit.fallback.decisions").tag("reason", reason).counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    @Override
    public String breakerState() {
        return failSafe.breaker().state().name();
    }

    @Override
    public String lastMinute() {
        RecentFallbacks.Window minute = failSafe.lastMinute();
        return String.format("{decisions %d, withoutStore %d, share %.4f, lastFallback %s %.1f s ago}",
                minute.decisions(), minute.fallbacks(), minute.share(), minute.lastReason(),
                minute.nanosSinceLast() / 1e9);
    }
}
