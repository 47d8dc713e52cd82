package dev.ratelimiter.redis;

import java.time.Duration;

import dev.ratelimiter.core.Background;
import dev.ratelimiter.core.PeriodicTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Renews the leases of the concurrency permits this instance holds ({@link RedisPermits#renewDue()}), checking every
 * {@code tick}. A failed renewal is only logged: the permit is tried again at the next tick and, if Redis stays
 * away, its lease ends — which is what a lease is for.
 */
public final class PermitRenewal {

    private static final Logger logger = LoggerFactory.getLogger(PermitRenewal.class);

    private final PeriodicTask loop;

    public PermitRenewal(RedisPermits permits, Duration tick) {
        this.loop = PeriodicTask.every("Renewing concurrency permits", tick,
                () -> permits.renewDue().timeout(tick.multipliedBy(4), Background.scheduler())
                        .onErrorResume(failure -> {
                            // expected while Redis is away; not worth the task's warning at every tick
                            logger.debug("Permit renewal failed; retrying at the next tick: {}", failure.toString());
                            return Mono.just(0L);
                        }));
    }

    public void start() {
        loop.start();
    }

    public void stop() {
        loop.stop();
    }
}
