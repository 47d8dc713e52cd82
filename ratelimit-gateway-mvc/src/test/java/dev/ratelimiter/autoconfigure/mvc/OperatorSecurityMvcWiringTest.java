package dev.ratelimiter.autoconfigure.mvc;

import java.util.Collection;
import java.util.List;

import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.core.InvalidLimitException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.actuate.endpoint.web.WebOperation;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;

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
                    .isInstanceOf(OperatorSecurityServletFilter.class);
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
    void onLoopbackWithoutCredentialsTheLoopbackFilterTakesItsPlace() {
        WebApplicationContextRunner loopback = new WebApplicationContextRunner()
                .withUserConfiguration(LoopbackOperatorPortMvcConfiguration.class)
                .withBean(PathMappedEndpoints.class, () -> new PathMappedEndpoints("/actuator", List::of));
        loopback.withPropertyValues("server.address=127.0.0.1").run(context -> {
            assertThat(context.getBean(FilterRegistrationBean.class).getFilter())
                    .isInstanceOf(LoopbackOnlyServletFilter.class);
            assertThat(context.getBean(FilterRegistrationBean.class).getOrder()).isEqualTo(-101);
        });
        loopback.withPropertyValues("server.address=127.0.0.1", "ratelimit.management.security.enabled=true")
                .run(context -> assertThat(context).doesNotHaveBean(FilterRegistrationBean.class));
        loopback.run(context -> assertThat(context).as("every address: credentials instead")
                .doesNotHaveBean(FilterRegistrationBean.class));
    }

    @Test
    void aWeakPasswordFailsTheStartUp() {
        runner.withPropertyValues("ratelimit.management.security.admin.password=short").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("at least 12 characters");
        });
    }

    @Test
    void aPasswordEncodingThatCannotBeReadFailsTheStartUp() {
        runner.withPropertyValues("ratelimit.management.security.admin.password={bcrypt}$2y$12$cut-short").run(
                context -> assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("not a well-formed {bcrypt} value")
                        .extracting(ex -> ((InvalidLimitException) ex).setting())
                        .isEqualTo("ratelimit.management.security.admin.password"));
    }

    /** Fail closed: without Spring Security's servlet configuration the endpoints are not served open. */
    @Test
    void withoutSpringSecurityTheStartUpStops() {
        runner.withClassLoader(new FilteredClassLoader(HttpSecurity.class)).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                    .hasMessageContaining("must be authenticated, but Spring Security");
        });
    }

    /**
     * A request is placed by the path its servlet serves it at (the DispatcherServlet's, below any servlet path) and
     * by its whole path; where the two readings differ, the stricter one wins, so a path is public only when every
     * reading that is an operator path is public.
     */
    @Test
    void aRequestIsPlacedByThePathItsServletServesAndTheStricterReadingWins() {
        OperatorPaths paths = new OperatorPaths(new PathMappedEndpoints("/actuator", () -> List.of(
                new Endpoint("health"), new Endpoint("env"), new Endpoint("ratelimit"))), List.of("health"),
                List.of("ratelimit"), false, "/actuator/v1/rules");
        assertThat(paths.guards(request("/gw", "/actuator/env"))).isTrue();
        assertThat(paths.isPublic(request("/gw", "/actuator/env"))).isFalse();
        assertThat(paths.isForViewer(request("/gw", "/actuator/v1/rules/x"))).isTrue();
        assertThat(paths.isPublic(request("/gw", "/actuator/health"))).isTrue();
        assertThat(paths.guards(request("/gw", "/api/actuator/env"))).as("a gateway route").isFalse();
        assertThat(paths.guards(request("/actuator/env", null))).as("the default servlet").isTrue();
        assertThat(paths.isPublic(request("/actuator/health/liveness", null))).isTrue();
        // a servlet mapped at /actuator/health/*: public by its whole path, env by the path it serves
        assertThat(paths.isPublic(request("/actuator/health", "/actuator/env"))).isFalse();
        assertThat(paths.isForViewer(request("/actuator/ratelimit", "/actuator/health/x"))).isFalse();
        // the discovery page is the viewer's, not what lies below it
        assertThat(paths.isForViewer(request("/gw", "/actuator"))).isTrue();
        assertThat(paths.isForViewer(request("/actuator/env", null))).isFalse();
        // on a port of their own every path is guarded, and a path no endpoint claims is the admin's
        OperatorPaths wholePort = new OperatorPaths(new PathMappedEndpoints("/actuator", List::of), List.of("health"),
                List.of("ratelimit"), true, null);
        assertThat(wholePort.guards(request("/gw", "/anything"))).isTrue();
        assertThat(wholePort.isPublic(request("/gw", "/anything"))).isFalse();
        assertThat(wholePort.isForViewer(request("/anything", null))).isFalse();
    }

    private static MockHttpServletRequest request(String servletPath, @Nullable String pathInfo) {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", servletPath + (pathInfo != null ? pathInfo
                : ""));
        request.setServletPath(servletPath);
        request.setPathInfo(pathInfo);
        return request;
    }

    /** An exposed endpoint at its id. */
    private record Endpoint(String id) implements ExposableWebEndpoint {

        @Override
        public EndpointId getEndpointId() {
            return EndpointId.of(id);
        }

        @Override
        public Access getDefaultAccess() {
            return Access.UNRESTRICTED;
        }

        @Override
        public Collection<WebOperation> getOperations() {
            return List.of();
        }

        @Override
        public String getRootPath() {
            return id;
        }
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
