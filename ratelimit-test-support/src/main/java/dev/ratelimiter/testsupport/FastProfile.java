package dev.ratelimiter.testsupport;

import java.lang.annotation.Annotation;
import java.lang.reflect.Field;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Nested;
import org.junit.platform.engine.FilterResult;
import org.junit.platform.engine.TestDescriptor;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.PostDiscoveryFilter;

/**
 * The inner loop's test selection ({@code ./mvnw verify -Pfast}, which sets {@code -Dratelimit.tests=fast}): unit and
 * context-runner tests only. A test class is left out when it boots a whole application
 * ({@code @SpringBootTest}), holds a real server (a Redis, a Kafka broker, a stub upstream, a proxy — a field of such
 * a type, on the class, a superclass or a {@code @Nested} class), or is named as a whole-system run ({@code …IntegrationTest},
 * {@code …SmokeTest}, {@code …StoryTest}, {@code …EndToEndTest}, {@code …AccuracyTest}, {@code …Experiment}).
 * Decided from the class itself, so a new test needs no list to be kept. Registered through the JUnit Platform's
 * service loader; without the property it excludes nothing.
 */
public final class FastProfile implements PostDiscoveryFilter {

    /** The system property that selects the fast profile. */
    public static final String PROPERTY = "ratelimit.tests";

    private static final Pattern WHOLE_SYSTEM_NAMES = Pattern.compile(
            ".*(IntegrationTest|SmokeTest|StoryTest|EndToEndTest|AccuracyTest|FailoverTest|Experiment)$");

    private static final Set<String> SERVER_TYPES = Set.of(RedisServer.class.getName(),
            ProcessRedisServer.class.getName(), ContainerRedisServer.class.getName(),
            RedisServerExtension.class.getName(), RedisCluster.class.getName(), RedisSentinel.class.getName(),
            StubUpstream.class.getName(), BlackHole.class.getName(), LatencyProxy.class.getName(),
            ClosedLoopLoad.class.getName(), "org.springframework.kafka.test.EmbeddedKafkaBroker",
            "org.apache.kafka.common.test.KafkaClusterTestKit",
            // the gateway modules' fixtures (in their own test trees, so named): a class holding one boots whole
            // gateways, and the timing-bound ones among them (FreshInstancesTest) fail on a loaded machine
            "dev.ratelimiter.gateway.GatewayFixture", "dev.ratelimiter.mvc.MvcGatewayFixture");

    private static final String SPRING_BOOT_TEST = "org.springframework.boot.test.context.SpringBootTest";

    private final boolean active = "fast".equals(System.getProperty(PROPERTY));
    private final ConcurrentMap<Class<?>, Boolean> decided = new ConcurrentHashMap<>();

    @Override
    public FilterResult apply(TestDescriptor descriptor) {
        if (!active) {
            return FilterResult.included("all tests");
        }
        Class<?> type = classOf(descriptor.getSource());
        if (type == null) {
            return FilterResult.included("not a test class");
        }
        return decided.computeIfAbsent(outermost(type), FastProfile::slow)
                ? FilterResult.excluded("starts a server or boots an application: left to the full suite")
                : FilterResult.included("unit or context-runner test");
    }

    /** Whether a test class starts a server or boots an application. */
    static boolean slow(Class<?> type) {
        if (WHOLE_SYSTEM_NAMES.matcher(type.getSimpleName()).matches()) {
            return true;
        }
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            if (annotated(c, SPRING_BOOT_TEST) || annotated(c, "org.springframework.kafka.test.context.EmbeddedKafka")) {
                return true;
            }
            for (Field field : c.getDeclaredFields()) {
                if (SERVER_TYPES.contains(field.getType().getName())) {
                    return true;
                }
            }
            for (Class<?> nested : c.getDeclaredClasses()) {
                if (nested.isAnnotationPresent(Nested.class) && slow(nested)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean annotated(Class<?> type, String annotationName) {
        for (Annotation annotation : type.getAnnotations()) {
            Class<? extends Annotation> kind = annotation.annotationType();
            if (kind.getName().equals(annotationName)) {
                return true;
            }
            // One level of meta-annotation: a composed test annotation of our own.
            for (Annotation meta : kind.getAnnotations()) {
                if (meta.annotationType().getName().equals(annotationName)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Class<?> classOf(Optional<TestSource> source) {
        if (source.isEmpty()) {
            return null;
        }
        try {
            if (source.get() instanceof ClassSource classSource) {
                return classSource.getJavaClass();
            }
            if (source.get() instanceof MethodSource methodSource) {
                return methodSource.getJavaClass();
            }
        }
        catch (RuntimeException ex) {
            return null;
        }
        return null;
    }

    private static Class<?> outermost(Class<?> type) {
        Class<?> outer = type;
        while (outer.getEnclosingClass() != null) {
            outer = outer.getEnclosingClass();
        }
        return outer;
    }
}
