package dev.ratelimiter.mvc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Server MVC does not read responses as they pass: a rule charged from the response stops the start-up with a sentence
 * naming the setting, rather than charging its minimum alone and letting clients use far more than the limit.
 */
class MvcChargeFromResponseRefusedTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();

    @Test
    void aRuleChargedFromTheResponseStopsTheStartUp() {
        assertThatThrownBy(() -> MvcGatewayApplications.start(fixture, "ratelimit.rules.llm.capacity=1000",
                "ratelimit.rules.llm.refill-tokens=1000", "ratelimit.rules.llm.refill-period=1m",
                "ratelimit.rules.llm.charge-from-response.json-field=usage.total_tokens"))
                .rootCause().hasMessage("ratelimit.rules.llm.charge-from-response is not supported on Spring Cloud "
                        + "Gateway Server MVC yet (only on the WebFlux gateway, ratelimit-spring-boot-starter): "
                        + "remove it, or charge a fixed cost or a cost-expression instead.");
    }
}
