package dev.ratelimiter.autoconfigure.rules;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.ratelimiter.core.RuleAdmin;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;

/**
 * The rules API's refusals as RFC 9457 problem details ({@code application/problem+json}): {@code type} (a URN of the
 * {@code error} name), {@code title}, {@code status}, {@code detail} and {@code instance}, and two members of our own:
 * {@code error}, the same stable name the actuator endpoint answers ({@code invalid_rule}, {@code
 * precondition_failed}, ...), and {@code field}, the member of the rule document at fault in dotted form with
 * indices ({@code match.tiers[1]}), when one is. Validation stops at the first fault, so there is one field at most.
 */
public final class RuleProblems {

    public static final String TYPE_PREFIX = "urn:ratelimit:problem:";

    private RuleProblems() {
    }

    public static RulesApiOperations.Answer answer(String instance, HttpStatus status, String error,
            @Nullable String field, String detail) {
        Map<String, Object> problem = new LinkedHashMap<>();
        problem.put("type", TYPE_PREFIX + error.replace('_', '-'));
        problem.put("title", title(status, error));
        problem.put("status", status.value());
        problem.put("detail", detail);
        problem.put("instance", instance);
        problem.put("error", error);
        if (field != null) {
            problem.put("field", field);
        }
        HttpHeaders headers = new HttpHeaders();
        headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        return new RulesApiOperations.Answer(status, headers, problem);
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
