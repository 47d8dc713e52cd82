package dev.ratelimiter.core;

/**
 * Identifies one bucket: the client it belongs to and the policy it counts for.
 *
 * <p>{@code client} is always a {@link ClientIds#of(String) hashed} identity and {@code policy} a
 * {@link PolicyNames validated} name, so every part is drawn from a safe charset: no input can reach
 * into another client's key or break a store's key syntax.
 *
 * @param client hashed client identity; also the partition (hash tag) the store co-locates by
 * @param policy the policy (limit) this bucket counts for, e.g. {@code free.default}
 */
public record BucketKey(String client, String policy) {
}
