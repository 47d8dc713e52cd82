package dev.ratelimiter;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/** The boundaries the design card asks for, enforced so they cannot erode one import at a time. */
class ArchitectureTest {

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
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
                        "dev.ratelimiter.autoconfigure..", "org.springframework.cloud..")
                .check(MAIN);
        noClasses().that().resideInAPackage("dev.ratelimiter.gateway..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ratelimiter.redis..",
                        "dev.ratelimiter.kafka..", "dev.ratelimiter.autoconfigure..", "org.springframework.data.redis..")
                .check(MAIN);
        noClasses().that().resideInAPackage("dev.ratelimiter.kafka..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ratelimiter.redis..",
                        "dev.ratelimiter.gateway..", "dev.ratelimiter.autoconfigure..", "io.lettuce..",
                        "org.springframework.cloud..")
                .check(MAIN);
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
