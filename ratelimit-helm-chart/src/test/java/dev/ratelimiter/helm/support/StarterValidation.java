package dev.ratelimiter.helm.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.autoconfigure.RateLimitEventsAutoConfiguration;
import dev.ratelimiter.autoconfigure.RateLimitSheddingAutoConfiguration;
import dev.ratelimiter.testsupport.KubernetesPod;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.assertj.AssertableReactiveWebApplicationContext;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * Validates an {@code application.yml} the chart rendered with the starter itself: the file is read by Spring
 * Boot's own YAML loader (as the pod reads it), its properties are given to the starter's auto-configuration (rule
 * set, load shedding, decision events), and the context must start. A configuration the starter refuses fails the
 * start with the same sentence the pod would print.
 */
public final class StarterValidation {

    private StarterValidation() {
    }

    /** The properties of the file, as {@code key=value} pairs, in the order Spring Boot flattened them. */
    public static List<String> properties(String applicationYml) {
        try {
            List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("chart application.yml",
                    new ByteArrayResource(applicationYml.getBytes(StandardCharsets.UTF_8)));
            List<String> pairs = new ArrayList<>();
            for (PropertySource<?> source : sources) {
                EnumerablePropertySource<?> enumerable = (EnumerablePropertySource<?>) source;
                for (String name : enumerable.getPropertyNames()) {
                    pairs.add(name + "=" + Objects.toString(enumerable.getProperty(name), ""));
                }
            }
            return pairs;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Starts the starter's auto-configuration with the file's properties, in an environment Spring Boot takes for a
     * Kubernetes pod (as the pod's is), and hands the context over. Kafka brokers
     * the file names are replaced by a loopback address that nothing listens on: the event sink is still built from
     * the file's settings, but its producer (created when the sink is flushed on close) never looks up or contacts
     * the cluster's brokers from the build machine.
     */
    public static void run(String applicationYml, ContextConsumer<AssertableReactiveWebApplicationContext> check) {
        List<String> properties = new ArrayList<>(properties(applicationYml));
        properties.replaceAll(pair -> pair.startsWith(KAFKA_BROKERS + "=") && pair.length() > KAFKA_BROKERS.length() + 1
                ? KAFKA_BROKERS + "=" + LOOPBACK_BROKER : pair);
        new ReactiveWebApplicationContextRunner()
                .withInitializer(new KubernetesPod())
                .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                        RateLimitEventsAutoConfiguration.class, RateLimitSheddingAutoConfiguration.class))
                .withPropertyValues(properties.toArray(String[]::new))
                .run(check);
    }

    private static final String KAFKA_BROKERS = "ratelimit.events.kafka.bootstrap-servers";

    private static final String LOOPBACK_BROKER = "127.0.0.1:9";

    /**
     * What Spring Boot would report for a start-up failure: the analysis of the failure analyzers registered in
     * {@code META-INF/spring.factories} (the starter registers one for refused limits), or null.
     */
    public static FailureAnalysis analyze(Throwable failure) {
        List<FailureAnalyzer> analyzers = SpringFactoriesLoader
                .forDefaultResourceLocation(StarterValidation.class.getClassLoader())
                .load(FailureAnalyzer.class, null, SpringFactoriesLoader.FailureHandler.handleMessage((message,
                        ex) -> { }));
        for (FailureAnalyzer analyzer : analyzers) {
            FailureAnalysis analysis = analyzer.analyze(failure);
            if (analysis != null) {
                return analysis;
            }
        }
        return null;
    }
}
