package dev.ratelimiter.autoconfigure.rules;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import dev.ratelimiter.core.WriteCondition;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;

/**
 * The rule set's version as a strong entity tag ({@code "17"}), and the preconditions of a write from the request's
 * {@code If-Match} / {@code If-None-Match}. Every rule carries the version of the whole rule set: any change to the
 * rules since a client read them makes its conditional write fail, and the client reads again.
 */
final class EntityTags {

    /** A version no rule set has: what an If-Match of nothing but unusable tags asks for. */
    static final long NEVER = -2;

    private EntityTags() {
    }

    static String of(long version) {
        return "\"" + version + "\"";
    }

    /**
     * The condition of a write, or null when the request sets none (the API then answers 428): {@code If-Match: *}
     * (the rule exists), {@code If-Match: "17"} (and the rules are at version 17), {@code If-None-Match: *} (the rule
     * does not exist). An {@code If-Match} of weak or foreign tags only can match nothing: a condition on
     * {@link #NEVER}.
     */
    static @Nullable WriteCondition condition(HttpHeaders headers) {
        List<String> ifMatch = values(headers.get(HttpHeaders.IF_MATCH));
        List<String> ifNoneMatch = values(headers.get(HttpHeaders.IF_NONE_MATCH));
        if (!ifMatch.isEmpty()) {
            if (ifMatch.contains("*")) {
                return WriteCondition.present();
            }
            Set<Long> versions = new LinkedHashSet<>();
            for (String tag : ifMatch) {
                // strong comparison (RFC 9110 13.1.1): a weak tag W/"17" matches nothing
                if (tag.matches("\"[0-9]{1,18}\"")) {
                    versions.add(Long.parseLong(tag.substring(1, tag.length() - 1)));
                }
            }
            return WriteCondition.atVersion(versions.isEmpty() ? Set.of(NEVER) : versions);
        }
        if (ifNoneMatch.contains("*")) {
            return WriteCondition.absent();
        }
        return null;
    }

    private static List<String> values(@Nullable List<String> headers) {
        if (headers == null) {
            return List.of();
        }
        return headers.stream().flatMap(value -> Arrays.stream(value.split(",")))
                .map(String::trim).filter(tag -> !tag.isEmpty()).toList();
    }
}
