package dev.ratelimiter.gateway;

import java.util.List;

/**
 * Where a value of the caller's identity came from, which decides two things: the namespace its buckets and tier
 * listings live in, and whether a verified token vouches for it.
 *
 * <p>Values the client writes (a header) keep the namespace they always had, the value as sent, so a header-only
 * configuration names every bucket as before. Values from the token are prefixed with their source ({@code claim:},
 * {@code principal:}, {@code expression:}): a token client whose {@code azp} is {@code acme} is {@code claim:acme},
 * and a caller sending {@code X-API-Key: acme} can never reach its tier or its buckets. A value as sent that itself
 * begins with one of the prefixes is moved under {@code header:}, so that no header can spell a token's value.
 */
public enum IdentityOrigin {

    /** A header, or an expression that read the request, in a source list that reads nothing else: trusted as set. */
    REQUEST(""),

    /**
     * A header, or an expression that read the request, where the list also reads the token: the token had no
     * value, so the client stated this one and nobody vouched for it.
     */
    UNVOUCHED(""),

    /** A claim of the caller's verified token. */
    CLAIM("claim:"),

    /** The authenticated principal's name. */
    PRINCIPAL("principal:"),

    /** An expression that read only the token (its claims, the principal). */
    TOKEN_EXPRESSION("expression:"),

    /** The operator's own code: a Spring Cloud Gateway {@code KeyResolver}, an application's resolver bean. */
    RESOLVER("");

    /** Prefixes of the namespaces no value as sent may spell; {@code address:} names a per-address stand-in. */
    static final List<String> RESERVED = List.of("claim:", "principal:", "expression:", "header:", "address:");

    private static final String ESCAPED = "header:";

    private final String prefix;

    IdentityOrigin(String prefix) {
        this.prefix = prefix;
    }

    /** The value as the rules and bucket keys see it: in this origin's namespace. Null stays null. */
    public String qualify(String value) {
        if (value == null) {
            return null;
        }
        if (!prefix.isEmpty()) {
            return prefix + value;
        }
        return reserved(value) ? ESCAPED + value : value;
    }

    /** Whether a verified token gave the value. */
    public boolean fromToken() {
        return !prefix.isEmpty();
    }

    /** Whether the client wrote the value itself (a header, or an expression over the request). */
    public boolean clientStated() {
        return this == REQUEST || this == UNVOUCHED;
    }

    private static boolean reserved(String value) {
        // most values have no colon at all: one scan, and the prefixes only for those that do
        if (value.indexOf(':') < 0) {
            return false;
        }
        for (String reserved : RESERVED) {
            if (value.startsWith(reserved)) {
                return true;
            }
        }
        return false;
    }
}
