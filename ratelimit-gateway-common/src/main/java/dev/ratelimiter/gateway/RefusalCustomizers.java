package dev.ratelimiter.gateway;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;

/**
 * Runs the user's {@link RateLimitResponseCustomizer}s over a refusal. A customizer's mistake must cost the client
 * its custom answer, never the refusal itself: on any failure the response is left as it was and the caller writes
 * the default. Failures are logged at most once a minute, with a count of those not logged: under attack every
 * refusal would fail the same way.
 */
final class RefusalCustomizers {

    private static final Logger logger = LoggerFactory.getLogger(RefusalCustomizers.class);

    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final List<RateLimitResponseCustomizer> customizers;
    private final LongSupplier nanoClock;
    private final AtomicLong lastLogged;
    private final AtomicLong unlogged = new AtomicLong();

    RefusalCustomizers(List<? extends RateLimitResponseCustomizer> customizers, LongSupplier nanoClock) {
        this.customizers = List.copyOf(customizers);
        this.nanoClock = nanoClock;
        this.lastLogged = new AtomicLong(nanoClock.getAsLong() - LOG_EVERY_NANOS);
    }

    /**
     * The customized answer, its headers a changed copy of {@code headers}; {@code null}, {@code headers} untouched,
     * when a customizer failed.
     */
    RefusalRenderer.Rendered apply(HttpHeaders headers, RefusalContext context, RefusalAnswer answer) {
        HttpStatusCode status = answer.status();
        Refusal refusal = new Refusal(status, HttpHeaders.copyOf(headers), answer.problemDetail());
        HttpStatusCode chosen;
        byte[] bytes;
        try {
            for (RateLimitResponseCustomizer customizer : customizers) {
                customizer.customize(refusal, context);
            }
            chosen = refusal.getStatus();
            if (chosen == null || chosen.value() < 400) {
                throw new IllegalStateException("a refusal must keep an error status (400 or more), but the "
                        + "customizers set " + chosen);
            }
            bytes = refusal.json(status).getBytes(StandardCharsets.UTF_8);
        }
        // Whatever a customizer throws is its mistake, not the refusal's: an AssertionError, a checked exception
        // thrown sneakily (Kotlin, Lombok), a body that contains itself and recurses without end. Only the JVM's
        // own failures (out of memory) go on.
        catch (Throwable ex) {
            if (ex instanceof VirtualMachineError fatal && !(ex instanceof StackOverflowError)) {
                throw fatal;
            }
            failed(context, ex);
            return null;
        }
        return new RefusalRenderer.Rendered(chosen, refusal.getHeaders(), bytes);
    }

    private void failed(RefusalContext context, Throwable failure) {
        long now = nanoClock.getAsLong();
        long last = lastLogged.get();
        if (now - last < LOG_EVERY_NANOS || !lastLogged.compareAndSet(last, now)) {
            unlogged.incrementAndGet();
            return;
        }
        long since = unlogged.getAndSet(0);
        logger.error("A RateLimitResponseCustomizer failed on a {} refusal; the default refusal was sent instead{}",
                context.kind(), since == 0 ? "" : " (" + since + " more failures since the last report)", failure);
    }
}
