package dev.ratelimiter.autoconfigure.security;

import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.autoconfigure.OperatorSecurityProperties;

/** Operator accounts whose every password check is counted (the check is package-private to the accounts). */
public final class CountingOperatorAccounts {

    private CountingOperatorAccounts() {
    }

    public static OperatorAccounts of(OperatorSecurityProperties properties, AtomicInteger checks) {
        return OperatorAccounts.of(properties, generated -> { }, check -> offered -> {
            checks.incrementAndGet();
            return check.matches(offered);
        });
    }
}
