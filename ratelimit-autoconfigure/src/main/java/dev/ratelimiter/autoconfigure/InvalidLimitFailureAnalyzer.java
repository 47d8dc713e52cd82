package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.InvalidLimitException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a refused limit into a start-up report a person can act on, instead of a bean-creation stack trace.
 */
final class InvalidLimitFailureAnalyzer extends AbstractFailureAnalyzer<InvalidLimitException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidLimitException cause) {
        return new FailureAnalysis("The rate limit configuration is invalid: " + cause.getMessage(),
                "Correct " + cause.setting() + " in your application configuration (application.yml or an "
                        + "environment variable). The README's 'Configuring limits' section lists every setting.",
                cause);
    }
}
