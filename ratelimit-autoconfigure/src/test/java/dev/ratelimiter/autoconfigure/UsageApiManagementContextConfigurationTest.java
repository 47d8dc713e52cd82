package dev.ratelimiter.autoconfigure;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.server.RouterFunction;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where the usage API is served: beside the rules API wherever that is (its path's last segment replaced by
 * {@code usage}), also with the rule store off; not where the rules API is not served. With the in-memory store it
 * reads that store's buckets.
 */
class UsageApiManagementContextConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                    RateLimitUsageAutoConfiguration.class, UsageApiManagementContextConfiguration.class))
            .withPropertyValues("ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.capacity=5",
                    "ratelimit.tiers.free.limits.default.refill-tokens=5",
                    "ratelimit.tiers.free.limits.default.refill-period=1h",
                    "ratelimit.tiers.free.api-keys[0]=some-key-0123456789");

    @SuppressWarnings("unchecked")
    private static WebTestClient client(ApplicationContext context) {
        return WebTestClient.bindToRouterFunction(context.getBean("rateLimitUsageApi", RouterFunction.class)).build();
    }

    @Test
    void besideTheRulesApiOnAManagementPortOfItsOwn() {
        runner.withPropertyValues("management.server.port=18081").run(context -> client(context).get()
                .uri("/v1/usage?apiKey=some-key-0123456789").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.rules[0].id").isEqualTo("free.default")
                .jsonPath("$.rules[0].remaining").isEqualTo(5)
                .jsonPath("$.rules[0].stored").isEqualTo(false)
                .jsonPath("$.tier").isEqualTo("free"));
        runner.withPropertyValues("management.server.port=18081", "ratelimit.rules-api.path=/admin/v2/rules")
                .run(context -> client(context).get().uri("/admin/v2/usage?apiKey=key-0123456789").exchange().expectStatus()
                        .isOk());
        runner.withPropertyValues("management.server.port=18081", "ratelimit.rule-store.enabled=false")
                .run(context -> client(context).get().uri("/v1/usage?apiKey=key-0123456789").exchange().expectStatus().isOk());
    }

    @Test
    void onTheApplicationsPortOnlyWhenTheRulesApiIsThere() {
        runner.run(context -> assertThat(context).doesNotHaveBean("rateLimitUsageApi"));
        runner.withPropertyValues("ratelimit.rules-api.enabled=true").run(context -> {
            client(context).get().uri("/actuator/v1/usage?apiKey=key-0123456789").exchange().expectStatus().isOk();
            client(context).get().uri("/v1/usage?apiKey=key-0123456789").exchange().expectStatus().isNotFound();
        });
        runner.withPropertyValues("management.server.port=18081", "ratelimit.rules-api.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("rateLimitUsageApi"));
    }

    @Test
    void withoutJacksonItIsNotServed() {
        runner.withPropertyValues("management.server.port=18081")
                .withClassLoader(new FilteredClassLoader(JsonMapper.class))
                .run(context -> assertThat(context).doesNotHaveBean("rateLimitUsageApi"));
    }

    @Test
    void onlyGetAndHeadAreAnswered() {
        runner.withPropertyValues("management.server.port=18081").run(context -> {
            client(context).head().uri("/v1/usage?apiKey=key-0123456789").exchange().expectStatus().isOk();
            client(context).delete().uri("/v1/usage?apiKey=key-0123456789").exchange().expectStatus().isEqualTo(405)
                    .expectHeader().valueEquals("Allow", "GET,HEAD");
            client(context).get().uri("/v1/usage").exchange().expectStatus().isBadRequest().expectBody()
                    .jsonPath("$.error").isEqualTo("invalid_query");
        });
    }
}
