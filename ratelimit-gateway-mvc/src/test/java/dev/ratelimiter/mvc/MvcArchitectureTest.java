package dev.ratelimiter.mvc;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;
import org.springframework.util.ClassUtils;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Server MVC flavour beside the WebFlux one, not on top of it: it decides through the shared layer
 * (ratelimit-gateway-common) and never sees the WebFlux module, which is not even on its class path.
 */
class MvcArchitectureTest {

    private static final JavaClasses MVC = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.ratelimiter.mvc", "dev.ratelimiter.autoconfigure.mvc");

    @Test
    void theWebFluxModuleIsNotOnTheClassPath() {
        ClassLoader loader = getClass().getClassLoader();
        assertThat(ClassUtils.isPresent("dev.ratelimiter.gateway.webflux.RateLimitFilter", loader)).isFalse();
        assertThat(ClassUtils.isPresent("dev.ratelimiter.gateway.RequestIdentityResolver", loader)).isFalse();
        assertThat(ClassUtils.isPresent("dev.ratelimiter.gateway.Admission", loader)).isTrue();
    }

    @Test
    void noMvcClassUsesAReactiveWebType() {
        assertThat(MVC.size()).as("the MVC classes were found").isGreaterThan(20);
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.ratelimiter.gateway.webflux..",
                "org.springframework.web.server..", "org.springframework.web.reactive..",
                "org.springframework.http.server.reactive..", "org.springframework.cloud.gateway.filter..",
                "org.springframework.cloud.gateway.route..", "reactor.netty..")
                .because("the Server MVC flavour has its own request, and decides through the shared layer")
                .check(MVC);
    }

    @Test
    void theAdapterDoesNotKnowTheWiring() {
        noClasses().that().resideInAPackage("dev.ratelimiter.mvc..")
                .should().dependOnClassesThat().resideInAPackage("dev.ratelimiter.autoconfigure..")
                .check(MVC);
    }
}
