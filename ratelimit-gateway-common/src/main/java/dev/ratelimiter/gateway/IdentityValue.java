package dev.ratelimiter.gateway;

/**
 * One value of the caller's identity as a source read it, with where it came from.
 *
 * @param value the value as read, never blank
 * @param origin where it came from: its namespace, and whether a token vouches for it
 */
public record IdentityValue(String value, IdentityOrigin origin) {
}
