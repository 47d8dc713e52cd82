package dev.ratelimiter.gateway;

import java.util.function.Supplier;

import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.UnknownValuePolicy;

/**
 * What a user or tenant id must be before the limiter counts it: the format an API key has too, and what becomes of
 * one nobody vouched for ({@link IdentityOrigin#UNVOUCHED}).
 *
 * @param format the length and pattern every value must have
 * @param unknown what an unvouched value gets
 */
public record IdentityValuePolicy(ApiKeyFormat format, UnknownValuePolicy unknown) {

    /** Any value, counted as given: what user and tenant ids had before they had a policy. */
    public static final IdentityValuePolicy ANY = new IdentityValuePolicy(ApiKeyFormat.ANY, UnknownValuePolicy.ACCEPT);

    /** Stands in for an unvouched value under {@link UnknownValuePolicy#PER_ADDRESS}: no value as sent spells it. */
    static final String ADDRESS = "address:";

    /**
     * The answer to a request whose value this policy refuses, or null.
     *
     * @param what the dimension in words ("user", "tenant")
     * @param where its sources in words, as the answers name them
     */
    RefusalAnswer refuse(String value, IdentityOrigin origin, String what, String where) {
        if (value == null) {
            return null;
        }
        String malformed = format.problem(value);
        if (malformed != null) {
            return RefusalAnswer.invalidIdentity(what, where, malformed);
        }
        return origin == IdentityOrigin.UNVOUCHED && unknown == UnknownValuePolicy.REJECT
                ? RefusalAnswer.unknownIdentity(what) : null;
    }

    /** The value as the rules count it: in its origin's namespace, or the client's address when unvouched. */
    String counted(String value, IdentityOrigin origin, Supplier<String> clientIp) {
        if (value != null && origin == IdentityOrigin.UNVOUCHED && unknown == UnknownValuePolicy.PER_ADDRESS) {
            String address = clientIp.get();
            // one shared bucket for requests whose address nobody knows, never one per value
            return ADDRESS + (address == null ? "" : address);
        }
        return origin.qualify(value);
    }
}
