package dev.ratelimiter.redis;

import java.time.Duration;

import dev.ratelimiter.core.Background;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Renews the leases of the concurrency permits this instance holds ({@link RedisPermits#renewDue()}), checking every
 * {@code tick}. A failed renewal is only logged: the permit is tried again at the next tick and, if Redis stays
 * away, its lease ends — which is what a lease is for.
 */
public final class PermitRenewal {

    private static final Logger logger = LoggerFactory.getLogger(PermitRenewal.class);

    private final RedisPermits permits;
    private final Duration tick;
    private Disposable loop;

    public PermitRenewal(RedisPermits permits, Duration tick) {
        this.permits = permits;
        this.tick = tick;
    }

    public synchronized void start() {
        if (loop == null) {
            loop = Flux.interval(tick, tick, Background.scheduler())
                    .onBackpressureDrop()
                    .concatMap(t -> permits.renewDue().timeout(tick.multipliedBy(4), Background.scheduler())
                            .onErrorResume(failure -> {
                                logger.debug("Permit renewal failed; retrying at the next tick: {}",
                                        failure.toString());
                                return Mono.just(0L);
                            }), 1)
                    .subscribe();
        }
    }

    public synchronized void stop() {
        if (loop != null) {
            loop.dispose();
            loop = null;
        }
    }
}
