package dev.ratelimiter.core;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Ids for concurrency permits: unique across every instance sharing a store (a random 64-bit prefix per process) and
 * cheap per request (a counter). They identify a request's permit in the store so it can be given back exactly once.
 */
final class PermitIds {

    private final String prefix = Long.toUnsignedString(new SecureRandom().nextLong(), 36) + ":";
    private final AtomicLong next = new AtomicLong();

    String next() {
        return prefix + Long.toString(next.incrementAndGet(), 36);
    }
}
