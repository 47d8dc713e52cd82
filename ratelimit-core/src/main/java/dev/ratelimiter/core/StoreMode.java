package dev.ratelimiter.core;

/** Where a rule's buckets are decided. */
public enum StoreMode {
    /** One atomic script in the shared store per request: exact across instances, one round trip each. */
    EXACT,
    /**
     * This instance's own share of each bucket, settled with the store every interval in one call for all keys:
     * no store call on the request path, and store calls that do not grow with traffic. Token buckets only.
     */
    LOCAL
}
