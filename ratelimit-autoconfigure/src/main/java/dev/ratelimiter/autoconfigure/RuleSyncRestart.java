package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.RuleSync;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextStartedEvent;

/**
 * Reads the rule store at once when the context is started again (stopped and started, or paused and restarted by
 * the test context cache), as the rule sync does when it starts with the application. The limiter's Redis connection
 * is closed while the context is stopped, so changes announced meanwhile were missed and the polls failed; the event
 * comes after every lifecycle bean has started, the connection's included, so the store is read again at once rather
 * than at the next poll.
 */
final class RuleSyncRestart implements ApplicationListener<ContextStartedEvent> {

    private final RuleSync sync;

    RuleSyncRestart(RuleSync sync) {
        this.sync = sync;
    }

    @Override
    public void onApplicationEvent(ContextStartedEvent event) {
        sync.refreshAndWait();
    }
}
