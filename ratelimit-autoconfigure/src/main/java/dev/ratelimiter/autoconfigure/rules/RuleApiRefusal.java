package dev.ratelimiter.autoconfigure.rules;

import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;

/** A request the rules API refuses before it reaches the rules; answered as a problem ({@link RuleProblems}). */
public final class RuleApiRefusal extends RuntimeException {

    public final HttpStatus status;
    public final String error;
    final @Nullable String field;

    RuleApiRefusal(HttpStatus status, String error, @Nullable String field, String detail) {
        super(detail, null, false, false);
        this.status = status;
        this.error = error;
        this.field = field;
    }
}
