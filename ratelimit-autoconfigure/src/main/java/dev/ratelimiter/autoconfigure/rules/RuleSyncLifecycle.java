package dev.ratelimiter.autoconfigure.rules;

import dev.ratelimiter.autoconfigure.store.LimiterConnectionLifecycle;
import dev.ratelimiter.core.RuleSync;
import org.springframework.context.SmartLifecycle;

/**
 * Starts and stops the rule sync with the context. A lifecycle bean rather than an init method because the context
 * starts every lifecycle bean even when beans are lazy ({@code spring.main.lazy-initialization=true}), and nothing on
 * the request path asks for the rule sync: as an init method it would never run there, and a stored kill switch
 * would never be in force. It also stops with the context and starts again with it (a paused test context, a
 * restart), so a stopped context does not poll a closed connection.
 *
 * <p>Its phase puts it after the limiter's connection (started earlier, stopped later: the first read meets an open
 * connection, the last poll a live one) and before the web server (started later, stopped earlier): the stored rules
 * are in force before the first request, and followed until the last one has been answered.
 */
public final class RuleSyncLifecycle implements SmartLifecycle {

    /** After {@link LimiterConnectionLifecycle#PHASE}, far below the web server's. */
    static final int PHASE = LimiterConnectionLifecycle.PHASE + 1_000;

    private final RuleSync sync;
    private volatile boolean running;

    public RuleSyncLifecycle(RuleSync sync) {
        this.sync = sync;
    }

    @Override
    public synchronized void start() {
        if (!running) {
            sync.start();
            running = true;
        }
    }

    @Override
    public synchronized void stop() {
        if (running) {
            running = false;
            sync.stop();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
