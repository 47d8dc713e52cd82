package dev.ratelimiter.gateway;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

/**
 * A started gateway on a Redis of its class ({@link GatewayFixture}, {@link RedisServerExtension}) is closed when its
 * class ends, before that Redis stops. Left
 * in Spring's test-context cache, each such context went on reconnecting to its dead Redis and running its background
 * loops until the JVM ended; with seventeen of them, another class's health call waited past 30 s in CI.
 */
class GatewayContextsCloseWithTheirClassTest {

    private static final JavaClasses TESTS = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
            .importPackages("dev.ratelimiter");

    private static final DescribedPredicate<JavaClass> ON_A_GATEWAY_FIXTURE = DescribedPredicate.describe(
            "start a gateway on a Redis of their own", type -> type.isAnnotatedWith(SpringBootTest.class)
                    && type.getFields().stream().anyMatch(field -> field.getRawType().isEquivalentTo(GatewayFixture.class)
                            || field.getRawType().isEquivalentTo(RedisServerExtension.class)));

    @Test
    void everySpringBootTestOnARedisOfItsOwnDirtiesItsContext() {
        classes().that(ON_A_GATEWAY_FIXTURE).should().beAnnotatedWith(DirtiesContext.class)
                .because("a cached context whose Redis was stopped keeps reconnecting and polling until the JVM ends")
                .check(TESTS);
    }
}
