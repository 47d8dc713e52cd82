package dev.ratelimiter.autoconfigure.mvc;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Security excluded from the MVC starter, endpoints on every address (the default): the start-up stops, with
 * {@code spring.main.lazy-initialization=true} too (found by the issue-34 review: the refusal lived in an accounts bean
 * nothing asked for, and the endpoints were served open).
 */
class LazyInitialisationFailsClosedMvcTest {

    @Test
    void underLazyInitialisationTheStartUpStopsToo() {
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitMvcOperatorSecurityAutoConfiguration.class))
                .withUserConfiguration(OperatorSecurityMvcManagementContextConfiguration.class)
                .withBean(PathMappedEndpoints.class, () -> new PathMappedEndpoints("/actuator", List::of))
                .withInitializer(context -> context.addBeanFactoryPostProcessor(
                        new LazyInitializationBeanFactoryPostProcessor()))
                .withClassLoader(new FilteredClassLoader("org.springframework.security"))
                .run(context -> assertThat(context).as("no filter, and the start-up passed").hasFailed()
                        .getFailure().hasMessageContaining("Spring Security"));
    }

    @Test
    void withoutLazyInitialisationTheStartUpStops() {
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitMvcOperatorSecurityAutoConfiguration.class))
                .withUserConfiguration(OperatorSecurityMvcManagementContextConfiguration.class)
                .withBean(PathMappedEndpoints.class, () -> new PathMappedEndpoints("/actuator", List::of))
                .withClassLoader(new FilteredClassLoader("org.springframework.security"))
                .run(context -> assertThat(context).hasFailed());
    }
}
