package dev.ratelimiter.autoconfigure.rules;

import java.net.URI;
import java.net.URISyntaxException;

import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.gateway.ProblemMembers;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;

/**
 * The rules API's refusals as RFC 9457 problem details ({@code application/problem+json}): {@code type} (a URN of the
 * {@code error} name), {@code title}, {@code status}, {@code detail} and {@code instance}, and two members of our own:
 * {@code error}, the same stable name the actuator endpoint answers ({@code invalid_rule}, {@code
 * precondition_failed}, ...), and {@code field}, the member of the rule document at fault in dotted form with
 * indices ({@code match.tiers[1]}), when one is. Validation stops at the first fault, so there is one field at most.
 * Each is a {@link ProblemDetail}, {@code error} and {@code field} its properties.
 */
public final class RuleProblems {

    public static final String TYPE_PREFIX = "urn:ratelimit:problem:";

    private RuleProblems() {
    }

    public static RulesApiOperations.Answer answer(String instance, HttpStatus status, String error,
            @Nullable String field, String detail) {
        HttpHeaders headers = new HttpHeaders();
        headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        // The members in their order, for the application's JSON codec to write as it always has: given the
        // ProblemDetail itself, Jackson 3 would sort them (ProblemMembers says why).
        return new RulesApiOperations.Answer(status, headers,
                ProblemMembers.of(problem(instance, status, error, field, detail)));
    }

    /** The problem the API answers for a refusal of a request to {@code instance} (the request's path). */
    public static ProblemDetail problem(String instance, HttpStatus status, String error, @Nullable String field,
            String detail) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setType(URI.create(TYPE_PREFIX + error.replace('_', '-')));
        problem.setTitle(title(status, error));
        URI path = uri(instance);
        if (path != null) {
            problem.setInstance(path);
        }
        else {
            // A path the server took but java.net.URI does not ('|', '{' on Netty): still named, as the text it was,
            // first among the properties - the same place in the body as the instance member.
            problem.setProperty("instance", instance);
        }
        problem.setProperty("error", error);
        if (field != null) {
            problem.setProperty("field", field);
        }
        return problem;
    }

    private static @Nullable URI uri(String path) {
        try {
            return new URI(path);
        }
        catch (URISyntaxException ex) {
            return null;
        }
    }

    private static String title(HttpStatus status, String error) {
        return switch (error) {
            case "invalid_rule" -> "Invalid rule";
            case "malformed_document" -> "Malformed rule document";
            case "precondition_failed" -> "The rules changed since they were read";
            case "precondition_required" -> "If-Match or If-None-Match required";
            case RuleAdmin.OUTCOME_UNKNOWN -> "The change may or may not have been applied";
            default -> status.getReasonPhrase();
        };
    }
}
