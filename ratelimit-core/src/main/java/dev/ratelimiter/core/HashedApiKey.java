package dev.ratelimiter.core;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An API key as the rule store holds it: the {@link ClientIds#scheme() scheme} that hashed it and the client id,
 * written {@code hmac:<8 hex digits>:<id>} (under a secret) or {@code sha256:<id>} (without one). A request matches
 * it when its own key hashes to the same id under the same scheme, so the key itself need never be stored.
 *
 * @param scheme {@code sha256} or {@code hmac:<fingerprint>}
 * @param clientId {@code [A-Za-z0-9_-]{22}}
 */
public record HashedApiKey(String scheme, String clientId) {

    private static final Pattern FORM = Pattern.compile("(sha256|hmac:[0-9a-f]{8}):([A-Za-z0-9_-]{22})");

    /**
     * Whether a match value is meant as a hashed key (it starts with {@code hmac:} or {@code sha256:}) rather than a
     * key as sent. Such a value is never taken as a raw key, so that a mistyped hash is refused instead of silently
     * matching nobody.
     */
    public static boolean looksHashed(String value) {
        return value.startsWith("hmac:") || value.startsWith("sha256:");
    }

    /** The hashed key a value stands for, or null when it is not one in the exact form. */
    public static HashedApiKey parse(String value) {
        Matcher form = FORM.matcher(value);
        return form.matches() ? new HashedApiKey(form.group(1), form.group(2)) : null;
    }

    /** The form a value meant as a hashed key must have, for refusals (which never echo the value: it may be a key). */
    public static final String EXPECTED_FORM = "hmac:<8 hex digits>:<22 characters of A-Z a-z 0-9 _ -> or "
            + "sha256:<22 such characters>";

    @Override
    public String toString() {
        return scheme + ":" + clientId;
    }
}
