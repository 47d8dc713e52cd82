package dev.ratelimiter.gateway;

import java.security.Principal;

/**
 * One place a value of the caller's identity is read from: a header, the authenticated principal, a claim of its
 * token, an expression over the request, on either web stack ({@link IdentityRequest}). Reading is synchronous: the principal, the one thing that may have to be
 * waited for, is resolved once per request before any source is asked.
 */
public interface IdentitySource {

    /** The value for this request, or null; {@code principal} is the authenticated caller, or null. Never blocks. */
    String read(IdentityRequest request, Principal principal);

    /**
     * The value for this request with where it came from, or null. By default {@link #read} from {@link #origin()};
     * a source whose origin depends on the request (an expression) says so itself.
     */
    default IdentityValue value(IdentityRequest request, Principal principal) {
        String value = read(request, principal);
        return value == null ? null : new IdentityValue(value, origin());
    }

    /** Where this source's values come from; what the client writes unless the source says otherwise. */
    default IdentityOrigin origin() {
        return IdentityOrigin.REQUEST;
    }

    /** Where the value comes from, in words a client can act on, e.g. "the X-User-Id header". */
    String describe();

    /** Whether it reads the principal: only then does the resolver wait for the security context. */
    default boolean readsPrincipal() {
        return false;
    }

    /**
     * A header or query parameter this source reads that the request carries more than once, or null: the resolver
     * then takes no value for the dimension (which of the two the upstream honours is not ours to guess).
     */
    default RepeatedName repeated(IdentityRequest request) {
        return null;
    }

    /** The request header {@code name}. */
    static IdentitySource header(String name) {
        return new HeaderSource(name);
    }

    /** The name of the authenticated principal (for a JWT, its {@code sub} claim); null when nobody is signed in. */
    static IdentitySource principal() {
        return PrincipalSource.INSTANCE;
    }

    /** A request header, read as the header resolver reads it; the resolver tells a header sent twice itself. */
    record HeaderSource(String name) implements IdentitySource {

        @Override
        public String read(IdentityRequest request, Principal principal) {
            return CallerIdentity.nonBlank(request.headers().getFirst(name));
        }

        @Override
        public String describe() {
            return "the " + name + " header";
        }

        @Override
        public RepeatedName repeated(IdentityRequest request) {
            return RequestIdentity.repeated(request.headers(), name) ? RepeatedName.header(name) : null;
        }
    }
}
