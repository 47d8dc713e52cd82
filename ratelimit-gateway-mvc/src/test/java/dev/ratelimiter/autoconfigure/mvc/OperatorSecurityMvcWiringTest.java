package dev.ratelimiter.autoconfigure.mvc;

import java.util.List;

import dev.ratelimiter.autoconfigure.OperatorAccounts;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

import static org.assertj.core.api.Assertions.assertThat;

/** Where the servlet flavour's operator filter and accounts exist: wherever the endpoints leave loopback. */
class OperatorSecurityMvcWiringTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitMvcOperatorSecurityAutoConfiguration.class))
            .withUserConfiguration(OperatorSecurityMvcManagementContextConfiguration.class)
            .withBean(PathMappedEndpoints.class, () -> new PathMappedEndpoints("/actuator", List::of));

    @Test
    void beyondLoopbackTheAccountsAndTheFilterArePresentAndTheGeneratedPasswordLeavesTheProperties() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(OperatorAccounts.class);
            assertThat(context.getBean(FilterRegistrationBean.class).getFilter())
                    .isInstanceOf(OperatorServletFilter.class);
            assertThat(context.getBean(FilterRegistrationBean.class).getOrder()).isEqualTo(-101);
        });
        runner.withPropertyValues("management.server.port=0", "management.server.address=10.0.0.5")
                .run(context -> assertThat(context).hasSingleBean(OperatorAccounts.class)
                        .hasSingleBean(FilterRegistrationBean.class));
    }

    @Test
    void onLoopbackSwitchedOffOrWithTheLimiterOffThereIsNoFilter() {
        runner.withPropertyValues("server.address=127.0.0.1").run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(OperatorAccounts.class).doesNotHaveBean(FilterRegistrationBean.class));
        runner.withPropertyValues("ratelimit.management.security.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(OperatorAccounts.class).doesNotHaveBean(FilterRegistrationBean.class));
        runner.withPropertyValues("ratelimit.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(OperatorAccounts.class).doesNotHaveBean(FilterRegistrationBean.class));
        runner.withPropertyValues("management.server.port=0", "management.server.address=127.0.0.1")
                .run(context -> assertThat(context).doesNotHaveBean(FilterRegistrationBean.class));
    }

    @Test
    void aWeakPasswordFailsTheStartUp() {
        runner.withPropertyValues("ratelimit.management.security.admin.password=short").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("at least 12 characters");
        });
    }

    @Test
    void inAReactiveApplicationTheServletFilterIsAbsent() {
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitMvcOperatorSecurityAutoConfiguration.class))
                .withUserConfiguration(OperatorSecurityMvcManagementContextConfiguration.class)
                .run(context -> assertThat(context).doesNotHaveBean(OperatorAccounts.class)
                        .doesNotHaveBean(FilterRegistrationBean.class));
    }
}
