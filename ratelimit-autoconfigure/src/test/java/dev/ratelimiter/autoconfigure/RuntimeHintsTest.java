package dev.ratelimiter.autoconfigure;

import java.io.IOException;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.ratelimiter.autoconfigure.actuate.OperatorJsonRuntimeHints;
import dev.ratelimiter.autoconfigure.actuate.RateLimitRulesEndpoint;
import dev.ratelimiter.autoconfigure.rules.RulesApiRoutes;
import dev.ratelimiter.autoconfigure.rules.RulesApiRuntimeHints;
import dev.ratelimiter.autoconfigure.store.LimiterScriptRuntimeHints;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.gateway.ClaimSource;
import dev.ratelimiter.core.RuleChange;
import dev.ratelimiter.redis.LimiterScript;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.runner.AbstractApplicationContextRunner;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a native image must be told of (README, "AOT and native images"): every resource the limiter reads and every
 * type of ours that Jackson writes, found by walking the real folders and real bodies rather than by a list here, so
 * that a new script or a new enum in a body fails this test until it has its hint.
 */
class RuntimeHintsTest {

    @Test
    void everyScriptInTheScriptFolderIsARegisteredResource() throws IOException {
        RuntimeHints hints = hintsOf(new LimiterScriptRuntimeHints());
        List<String> scripts = resourcesUnder(LimiterScript.LOCATION);
        assertThat(scripts).as("one file per LimiterScript, nothing else in the folder")
                .hasSize(LimiterScript.values().length);
        assertThat(scripts).allSatisfy(script -> assertThat(RuntimeHintsPredicates.resource().forResource(script))
                .as(script).accepts(hints));
    }

    @Test
    void theRulesApiDocumentIsARegisteredResource() throws IOException {
        RuntimeHints hints = hintsOf(new RulesApiRuntimeHints());
        String folder = RulesApiRoutes.OPENAPI.substring(0, RulesApiRoutes.OPENAPI.lastIndexOf('/') + 1);
        assertThat(resourcesUnder(folder)).containsExactly(RulesApiRoutes.OPENAPI)
                .allSatisfy(document -> assertThat(RuntimeHintsPredicates.resource().forResource(document))
                        .accepts(hints));
    }

    @Test
    void everySpringSecurityClassAskedForByNameIsKnownToTheImage() {
        RuntimeHints hints = hintsOf(new SpringSecurityProbeRuntimeHints());
        assertThat(SpringSecurityProbeRuntimeHints.PROBED).hasSize(3).allSatisfy(name -> assertThat(
                RuntimeHintsPredicates.reflection().onType(TypeReference.of(name))).as(name).accepts(hints));
    }

    @Test
    void everyTypeOfOursInTheOperatorsJsonHasBindingHints() {
        RuntimeHints hints = hintsOf(new OperatorJsonRuntimeHints());
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitActuatorAutoConfiguration.class,
                        RateLimitAutoConfiguration.class))
                .withPropertyValues("management.endpoints.web.exposure.include=ratelimit,health",
                        "ratelimit.rules.hourly.algorithm=sliding-window", "ratelimit.rules.hourly.limit=1000",
                        "ratelimit.rules.hourly.window=1h", "ratelimit.rules.reports.algorithm=concurrency",
                        "ratelimit.rules.reports.max-in-progress=2", "ratelimit.rules.login.capacity=3",
                        "ratelimit.rules.login.refill-tokens=1", "ratelimit.rules.login.key=user",
                        "ratelimit.rules.login.when-missing=deny")
                .run(context -> {
                    RuleChange written = context.getBean(RuleAdmin.class).put("runtime", Map.of("capacity", 5,
                            "refillTokens", 5, "refillPeriod", "1s", "mode", "shadow"));
                    assertThat(written.isApplied()).as(written.reason()).isTrue();
                    Set<Class<?>> ours = new LinkedHashSet<>();
                    collectOurTypes(context.getBean(RateLimitRulesEndpoint.class).rules(SecurityContext.NONE)
                            .getBody(), ours);
                    collectOurTypes(written.written(), ours);
                    collectOurTypes(context.getBean("rateLimitHealthIndicator", HealthIndicator.class).health()
                            .getDetails(), ours);
                    assertThat(ours).as("a rule's settings and the rule store's state are enums of ours").isNotEmpty()
                            .allSatisfy(type -> assertThat(RuntimeHintsPredicates.reflection().onType(type))
                                    .as(type.getName()).accepts(hints));
                });
    }

    @Test
    void aheadOfTimeProcessingCollectsTheHintsOfTheConfigurationsInUse() {
        RuntimeHints redis = aotHints(new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                DataRedisAutoConfiguration.class, RateLimitRedisAutoConfiguration.class,
                RateLimitAutoConfiguration.class, RateLimitActuatorAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.url=redis://127.0.0.1:1", "ratelimit.store.type=redis"));
        assertThat(RuntimeHintsPredicates.resource().forResource(LimiterScript.LOCATION + "rate_limit.lua"))
                .accepts(redis);
        assertThat(RuntimeHintsPredicates.reflection().onType(dev.ratelimiter.core.Mode.class)).accepts(redis);
        assertThat(RuntimeHintsPredicates.resource().forResource(RulesApiRoutes.OPENAPI)).rejects(redis);

        RuntimeHints memory = aotHints(new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class)));
        assertThat(RuntimeHintsPredicates.resource().forResource(LimiterScript.LOCATION + "rate_limit.lua"))
                .as("no Redis store, no scripts").rejects(memory);
        assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of(ClaimSource.AUTHENTICATION)))
                .accepts(memory);

        RuntimeHints rulesApi = aotHints(new ReactiveWebApplicationContextRunner().withConfiguration(
                AutoConfigurations.of(RateLimitAutoConfiguration.class, RulesApiManagementContextConfiguration.class))
                .withPropertyValues("ratelimit.rules-api.enabled=true"));
        assertThat(RuntimeHintsPredicates.resource().forResource(RulesApiRoutes.OPENAPI)).accepts(rulesApi);
    }

    private static RuntimeHints hintsOf(RuntimeHintsRegistrar registrar) {
        RuntimeHints hints = new RuntimeHints();
        registrar.registerHints(hints, RuntimeHintsTest.class.getClassLoader());
        return hints;
    }

    /** The hints that Spring's AOT processing, as {@code spring-boot:process-aot} runs it, collects of a context. */
    private static RuntimeHints aotHints(AbstractApplicationContextRunner<?, ?, ?> runner) {
        DefaultGenerationContext generation = new DefaultGenerationContext(
                new ClassNameGenerator(ClassName.get(RuntimeHintsTest.class)), new InMemoryGeneratedFiles());
        runner.prepare(context -> new ApplicationContextAotGenerator().processAheadOfTime(
                (GenericApplicationContext) context.getSourceApplicationContext(), generation));
        return generation.getRuntimeHints();
    }

    /** The files below a classpath folder, as paths from the classpath's root. */
    private static List<String> resourcesUnder(String folder) throws IOException {
        Resource[] found = new PathMatchingResourcePatternResolver().getResources("classpath*:" + folder + "**");
        return Arrays.stream(found).filter(Resource::isReadable).map(Resource::getFilename)
                .filter(name -> name != null && !name.isEmpty()).map(name -> folder + name).distinct().sorted().toList();
    }

    /** Every class outside the JDK among the values (and keys) of a JSON body made of maps and lists. */
    private static void collectOurTypes(Object value, Set<Class<?>> ours) {
        if (value instanceof Map<?, ?> map) {
            map.forEach((key, item) -> {
                collectOurTypes(key, ours);
                collectOurTypes(item, ours);
            });
        }
        else if (value instanceof Collection<?> items) {
            items.forEach(item -> collectOurTypes(item, ours));
        }
        else if (value instanceof Enum<?> constant && !isJdk(constant.getDeclaringClass())) {
            ours.add(constant.getDeclaringClass());
        }
        else if (value != null && !isJdk(value.getClass())) {
            ours.add(value.getClass());
        }
    }

    private static boolean isJdk(Class<?> type) {
        return type.getName().startsWith("java.");
    }
}
