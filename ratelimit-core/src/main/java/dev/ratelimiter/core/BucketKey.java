package dev.ratelimiter.core;

/**
 * Identifies one bucket in a store.
 *
 * <p>{@code partition} is what a store co-locates by (the Redis hash tag): the hashed API key when the rule is
 * per API key, so that every bucket of one client lands in one Redis Cluster slot; otherwise the hash of the rule's
 * key values. {@code name} is the rule id, plus the hash of any further key values. Every part is hashed or a
 * validated name, so no request input can reach into another bucket or break a store's key syntax.
 *
 * @param partition co-location partition, {@code [A-Za-z0-9_-]{22}}
 * @param name rule id, optionally followed by {@code :} and a hash
 */
public record BucketKey(String partition, String name) {
}
