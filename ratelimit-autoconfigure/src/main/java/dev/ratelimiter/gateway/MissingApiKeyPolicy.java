package dev.ratelimiter.gateway;

import org.springframework.http.HttpStatusCode;

/**
 * What the filter does with a request that carries no API key.
 *
 * @param headerName header the API key is read from
 * @param reject whether such requests are answered by the limiter ({@code status}) or passed on unlimited
 * @param status status of the answer when rejecting (401 by default)
 */
public record MissingApiKeyPolicy(String headerName, boolean reject, HttpStatusCode status) {
}
