package dev.ratelimiter.gateway;

import org.springframework.http.HttpStatusCode;

/**
 * What the filter does with a request that carries no API key.
 *
 * @param reject whether such requests are answered by the limiter ({@code status}), or evaluated without a key
 * (only rules that need no API key, such as per-IP or per-route caps, then apply)
 * @param status status of the answer when rejecting (401 by default)
 */
public record MissingApiKeyPolicy(boolean reject, HttpStatusCode status) {
}
