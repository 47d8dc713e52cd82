package dev.ratelimiter.core;

import java.util.List;

/**
 * What a rule does with a request that lacks a value its buckets are per (no tenant header for a per-tenant cap, no
 * user for a per-user limit, no client address the limiter can read). Skipping is what a per-customer limit wants —
 * the missing-API-key policy governs requests without a key — but for a cap it means that leaving the value out
 * escapes the cap.
 */
public enum WhenMissing {

    /** The rule does not apply to the request. */
    SKIP,
    /** Every request lacking the value shares one bucket of the rule: together they get what one tenant gets. */
    SHARED,
    /** The request is refused (400, {@code missing_identity}) before any store is asked; a shadow rule skips it. */
    DENY;

    /**
     * The default for a rule keyed by these dimensions: {@link #SHARED} when a user, tenant or client address is part
     * of the key (a cap that a request must not escape by leaving its header out, or by making the server report an
     * address that is none), else {@link #SKIP}.
     */
    public static WhenMissing defaultFor(List<Dimension> key) {
        return key != null && (key.contains(Dimension.USER) || key.contains(Dimension.TENANT)
                || key.contains(Dimension.CLIENT_IP)) ? SHARED : SKIP;
    }
}
