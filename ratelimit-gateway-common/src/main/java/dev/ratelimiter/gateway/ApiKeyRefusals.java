package dev.ratelimiter.gateway;

import org.springframework.http.HttpStatusCode;

/**
 * How the filter answers requests whose API key it refuses before any rule is asked.
 *
 * @param rejectMissing whether a request without an API key is answered by the limiter ({@code missingStatus}), or
 * evaluated without a key (only rules that need no API key, such as per-IP or per-route caps, then apply)
 * @param missingStatus status of the answer to a request without a key, when rejecting (401 by default)
 * @param unknownStatus status of the answer to a key no tier or override lists, when the rule set's
 * {@linkplain dev.ratelimiter.core.UnknownApiKeyPolicy policy} rejects those (401 by default)
 */
public record ApiKeyRefusals(boolean rejectMissing, HttpStatusCode missingStatus, HttpStatusCode unknownStatus) {
}
