package dev.ratelimiter.autoconfigure.store;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.LeaseStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.StoreStack;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The parts of the store the health, the view, the breaker gauge and the settle loop report on or drive: from our
 * {@link StoreStack} when we built it, else found inside the application's own store (one assembled from the public
 * {@link FailSafeStore} and {@link LeaseStore} keeps its health details and its settling).
 */
public final class StoreParts {

    private StoreParts() {
    }

    /** The breaker-guarded store, or null when decisions are made in this instance's memory only. */
    public static FailSafeStore failSafe(ObjectProvider<StoreStack> stack, ObjectProvider<RateLimitStore> store) {
        StoreStack ours = stack.getIfAvailable();
        if (ours != null) {
            return ours.failSafe();
        }
        RateLimitStore theirs = store.getIfAvailable();
        return theirs != null ? theirs.find(FailSafeStore.class).orElse(null) : null;
    }

    /** The local-mode leases to settle, or null when there are none. */
    static LeaseStore leases(ObjectProvider<RateLimitStore> store) {
        RateLimitStore theirs = store.getIfAvailable();
        return theirs != null ? theirs.find(LeaseStore.class).orElse(null) : null;
    }
}
