package dev.ratelimiter;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.RefusalContext;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import dev.ratelimiter.gateway.webflux.RateLimitFilter;
import org.junit.jupiter.api.Test;
import org.springframework.web.server.ServerWebExchange;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/** The boundaries the design card asks for, enforced so they cannot erode one import at a time. */
class ArchitectureTest {

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            // The other modules' test fixtures come as test jars (ratelimit-core-…-tests.jar): tests, too.
            .withImportOption(location -> !location.contains("-tests.jar"))
            .importPackages("dev.ratelimiter");

    @Test
    void coreKnowsNothingOfSpringRedisClientsOrTheAdapters() {
        noClasses().that().resideInAPackage("dev.ratelimiter.core..")
                .should().dependOnClassesThat().resideInAnyPackage("org.springframework..", "io.lettuce..",
                        "io.netty..", "org.apache.kafka..", "tools.jackson..", "dev.ratelimiter.redis..",
                        "dev.ratelimiter.gateway..", "dev.ratelimiter.kafka..", "dev.ratelimiter.autoconfigure..")
                .because("the core is a plain library that the Spring glue adapts")
                .check(MAIN);
    }

    @Test
    void adaptersDoNotReachIntoEachOtherOrTheWiring() {
        noClasses().that().resideInAPackage("dev.ratelimiter.redis..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ratelimiter.gateway..",
                        "dev.ratelimiter.autoconfigure..", "org.springframework..")
                .because("the Redis store is Lettuce and the core, usable without Spring")
                .check(MAIN);
        noClasses().that().resideInAPackage("dev.ratelimiter.gateway..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ratelimiter.redis..",
                        "dev.ratelimiter.kafka..", "dev.ratelimiter.autoconfigure..", "dev.ratelimiter.mvc..",
                        "org.springframework.data.redis..")
                .check(MAIN);
        noClasses().that().resideInAPackage("dev.ratelimiter.kafka..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ratelimiter.redis..",
                        "dev.ratelimiter.gateway..", "dev.ratelimiter.autoconfigure..", "io.lettuce..",
                        "org.springframework.cloud..")
                .check(MAIN);
    }

    /**
     * The layer both flavours share (ratelimit-gateway-common) depends on spring-web, whose jar also holds WebFlux's
     * {@code ServerWebExchange}: the module graph cannot keep a reactive type out of a shared signature, so this does.
     * Two exceptions, for applications written before the flavours shared it: {@code RequestIdentityResolver}, the
     * WebFlux flavour's public extension point, which kept its package (it lives in ratelimit-gateway-webflux), and
     * {@code RefusalContext}'s deprecated {@code exchange()}, which may name {@code ServerWebExchange} and nothing else.
     */
    @Test
    void theSharedLayerKnowsNoWebStack() {
        String[] webStacks = { "org.springframework.web.server..", "org.springframework.web.reactive..",
                "org.springframework.http.server.reactive..", "org.springframework.web.servlet..",
                "org.springframework.cloud..", "jakarta.servlet..", "reactor.netty..", "io.netty..",
                "dev.ratelimiter.gateway.webflux.." };
        noClasses().that().resideInAPackage("dev.ratelimiter.gateway")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.gateway.RequestIdentityResolver")
                .and().doNotHaveFullyQualifiedName(RefusalContext.class.getName())
                .should().dependOnClassesThat().resideInAnyPackage(webStacks)
                .because("both flavours decide through it; each keeps only how it waits and how it writes")
                .check(MAIN);
        noClasses().that().haveFullyQualifiedName(RefusalContext.class.getName())
                .should().dependOnClassesThat(JavaClass.Predicates.resideInAnyPackage(webStacks)
                        .and(DescribedPredicate.not(JavaClass.Predicates.equivalentTo(ServerWebExchange.class))))
                .check(MAIN);
    }

    /**
     * The Server MVC flavour loads the wiring too, on a class path without WebFlux or Spring Cloud Gateway's reactive
     * server: a shared wiring class that names a WebFlux type fails there as it loads (NoClassDefFoundError), which
     * only an MVC test booting that path would show. So the classes that may name one are listed — the WebFlux
     * flavour's own wiring, loaded only under its conditions — and a new one must be added here on purpose.
     */
    @Test
    void onlyTheWebFluxWiringNamesWebFluxTypes() {
        noClasses().that().resideInAPackage("dev.ratelimiter.autoconfigure..")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.LoopbackOperatorPortConfiguration")
                .and().doNotHaveFullyQualifiedName(
                        "dev.ratelimiter.autoconfigure.OperatorSecurityManagementContextConfiguration")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.RateLimitGatewayAutoConfiguration")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.RateLimitIdentityAutoConfiguration")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.RateLimitSheddingAutoConfiguration")
                .and().doNotHaveFullyQualifiedName(
                        "dev.ratelimiter.autoconfigure.RulesApiManagementContextConfiguration")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.identity.WebFluxIdentityResolvers")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.rules.RuleDocumentReader")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.rules.RulesApiHandler")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.rules.AbuseScoresApiHandler")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.UsageApiManagementContextConfiguration")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.usage.UsageApiHandler")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.usage.CallerUsageWebFilter")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.RateLimitUsageMeAutoConfiguration")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.rules.RulesApiRoutes")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.rules.WhatIfHandler")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.security.LoopbackOnlyFilter")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.security.OperatorRequests")
                .and().doNotHaveFullyQualifiedName("dev.ratelimiter.autoconfigure.security.OperatorSecurityFilter")
                .and().resideOutsideOfPackage("dev.ratelimiter.autoconfigure.mvc..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ratelimiter.gateway.webflux..",
                        "org.springframework.web.server..", "org.springframework.web.reactive..",
                        "org.springframework.http.server.reactive..", "org.springframework.cloud.gateway..",
                        "org.springframework.security.config.web.server..", "org.springframework.security.web.server..")
                .orShould().dependOnClassesThat()
                .haveFullyQualifiedName("dev.ratelimiter.gateway.RequestIdentityResolver")
                .because("the Server MVC flavour loads the rest of the wiring on a class path without them")
                .check(MAIN);
    }

    @Test
    void theSharedLayerComesFromItsOwnJarAndTheWebFluxFlavourFromAnother() {
        assertThat(jarOf(Admission.class)).contains("ratelimit-gateway-common");
        assertThat(jarOf(RateLimitFilter.class)).contains("ratelimit-gateway-webflux");
        assertThat(jarOf(RequestIdentityResolver.class)).contains("ratelimit-gateway-webflux");
        assertThat(jarOf(RateLimitEvaluator.class)).contains("ratelimit-core");
    }

    private static String jarOf(Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation().toString();
    }

    @Test
    void onlyTheWiringKnowsTheWiring() {
        noClasses().that().resideOutsideOfPackage("dev.ratelimiter.autoconfigure..")
                .should().dependOnClassesThat().resideInAPackage("dev.ratelimiter.autoconfigure..")
                .because("auto-configuration adapts the library to Spring Boot; nothing depends on it")
                .check(MAIN);
    }

    @Test
    void thePackagesHaveNoCycles() {
        slices().matching("dev.ratelimiter.(*)..").should().beFreeOfCycles().check(MAIN);
    }
}
