package dev.ratelimiter.gateway.webflux;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * operations.md documents the exchange attribute {@code RateLimitFilter.REQUEST_ATTRIBUTE} as where filters after the
 * limiter read the request's RequestAttributes. Its value is derived from the class name, so moving RateLimitFilter to
 * dev.ratelimiter.gateway.webflux would have renamed the attribute silently: a filter that reads it by its name (a
 * literal, as non-Java filters and logging/MDC configurations do) would get null. It keeps its name.
 */
class RequestAttributeNameTest {

    @Test
    void theExchangeAttributeKeepsItsName() {
        assertThat(RateLimitFilter.REQUEST_ATTRIBUTE).isEqualTo("dev.ratelimiter.gateway.RateLimitFilter.request");
    }
}
