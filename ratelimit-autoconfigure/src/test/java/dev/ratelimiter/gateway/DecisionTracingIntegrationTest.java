package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A decision in a trace, through a real tracer (OpenTelemetry's SDK behind Micrometer's bridge) in a running gateway
 * on a real Redis: the server's request span is the parent of {@code ratelimit.decision}, which is the parent of
 * {@code ratelimit.store}. The tree is printed, to be read (and pasted) as it is.
 */
class DecisionTracingIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();

    private static final List<SpanData> spans = new CopyOnWriteArrayList<>();

    private static ConfigurableApplicationContext gateway;

    @BeforeAll
    static void start() {
        gateway = GatewayInstance.start(List.of(Tracing.class), fixture.redis().url(), fixture.upstream().uri(),
                "ratelimit.store.type=redis", "ratelimit.store.timeout=2s", "ratelimit.default-tier=free",
                "ratelimit.api-key.unknown.policy=default-tier", "ratelimit.tiers.free.limits.default.capacity=5",
                "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.tiers.free.limits.default.refill-period=1h");
        GatewayInstance.awaitRedis(gateway);
    }

    @AfterAll
    static void stop() {
        gateway.close();
    }

    @Test
    void theDecisionIsAChildOfTheRequestSpanAndTheParentOfItsStoreCall() {
        // a first request warms the JVM up, so the printed durations are a warm gateway's
        GatewayInstance.client(gateway).get().uri("/api/traced").header("X-API-Key", "traced-client").exchange()
                .expectStatus().isOk();
        awaitSpan("http get");
        spans.clear();
        GatewayInstance.client(gateway).get().uri("/api/traced").header("X-API-Key", "traced-client").exchange()
                .expectStatus().isOk();
        SpanData server = awaitSpan("http get");

        List<SpanData> trace = spans.stream().filter(span -> span.getTraceId().equals(server.getTraceId())).toList();
        System.out.println("The trace of one allowed request:\n" + tree(trace));

        SpanData decision = only(trace, "ratelimit decision");
        SpanData store = only(trace, "ratelimit store");
        assertThat(decision.getParentSpanId()).as("the decision's parent: the server's request span")
                .isEqualTo(server.getSpanId());
        assertThat(store.getParentSpanId()).as("the store call's parent: the decision").isEqualTo(decision.getSpanId());
        assertThat(decision.getAttributes().asMap().entrySet().stream()
                .collect(Collectors.toMap(entry -> entry.getKey().getKey(), entry -> String.valueOf(entry.getValue()))))
                .containsEntry("ratelimit.outcome", "allowed").containsEntry("ratelimit.source", "store")
                .containsEntry("ratelimit.tier", "free").containsKey("ratelimit.client.id")
                .doesNotContainValue("traced-client");
        assertThat(store.getStartEpochNanos()).as("the store call runs within its decision")
                .isGreaterThanOrEqualTo(decision.getStartEpochNanos());
        assertThat(store.getEndEpochNanos()).isLessThanOrEqualTo(decision.getEndEpochNanos());
    }

    /** Bounded: the server's span ends once the response is written, which the client may see first. */
    private static SpanData awaitSpan(String name) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            for (SpanData span : spans) {
                if (span.getName().equals(name)) {
                    return span;
                }
            }
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
        throw new AssertionError("no span '" + name + "' within 10 s; spans: " + spans);
    }

    private static SpanData only(List<SpanData> trace, String name) {
        List<SpanData> named = trace.stream().filter(span -> span.getName().equals(name)).toList();
        assertThat(named).as("spans named '%s' in %s", name, trace).hasSize(1);
        return named.get(0);
    }

    /** The spans as an indented tree, each with its id, its parent's and its attributes. */
    static String tree(List<SpanData> trace) {
        Map<String, List<SpanData>> children = trace.stream().collect(Collectors.groupingBy(SpanData::getParentSpanId));
        StringBuilder out = new StringBuilder();
        trace.stream().filter(span -> trace.stream().noneMatch(other -> other.getSpanId().equals(span.getParentSpanId())))
                .forEach(root -> print(root, children, 0, out));
        return out.toString();
    }

    private static void print(SpanData span, Map<String, List<SpanData>> children, int depth, StringBuilder out) {
        out.append("  ".repeat(depth)).append(depth == 0 ? "" : "└─ ").append(span.getName())
                .append("  [span ").append(span.getSpanId()).append(", parent ").append(span.getParentSpanId())
                .append(", ").append((span.getEndEpochNanos() - span.getStartEpochNanos()) / 1000).append(" µs] ")
                .append(span.getAttributes().asMap().entrySet().stream()
                        .map(entry -> entry.getKey().getKey() + "=" + entry.getValue()).sorted()
                        .collect(Collectors.joining(", ")))
                .append('\n');
        children.getOrDefault(span.getSpanId(), List.of()).stream()
                .sorted((a, b) -> Long.compare(a.getStartEpochNanos(), b.getStartEpochNanos()))
                .forEach(child -> print(child, children, depth + 1, out));
    }

    /** A tracer as an application's tracing set-up would register it: spans kept in memory for the test. */
    @Configuration(proxyBeanMethods = false)
    static class Tracing {

        @Bean(destroyMethod = "close")
        SdkTracerProvider testTracerProvider() {
            return SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(new Kept())).build();
        }

        @Bean
        ObservationHandler<Observation.Context> testTracingHandler(SdkTracerProvider provider) {
            return new DefaultTracingObservationHandler(new OtelTracer(provider.get("ratelimit-test"),
                    new OtelCurrentTraceContext(), event -> {
                    }));
        }
    }

    private static final class Kept implements SpanExporter {

        @Override
        public CompletableResultCode export(Collection<SpanData> finished) {
            spans.addAll(finished);
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }
}
