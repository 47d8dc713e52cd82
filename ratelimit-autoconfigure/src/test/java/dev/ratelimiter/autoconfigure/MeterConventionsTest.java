package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.testsupport.RedisServerExtension;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.prometheusmetrics.PrometheusNamingConvention;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableReactiveWebApplicationContext;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every meter the limiter registers, with everything on (Redis, shedding, decision events and regions to Kafka, a
 * shadow rule, customer overrides posted and deleted through the rule lifecycle), follows Micrometer's conventions and
 * keeps its tags bounded: what a monitoring system bills and indexes by.
 */
class MeterConventionsTest {

    /** A port nothing listens on: the Kafka clients are built and keep trying, never reaching a broker. */
    private static final String NO_BROKER = "127.0.0.1:9";
    private static final int OVERRIDES = 20;

    /** Every meter name, so that the checks below cannot pass on fewer meters than the limiter has. */
    private static final Set<String> EVERY_METER = Set.of("ratelimit.decisions", "ratelimit.near.limit",
            "ratelimit.shadow.denials", "ratelimit.store.calls", "ratelimit.store.breaker.state",
            "ratelimit.store.fallback.share", "ratelimit.fallback.decisions", "ratelimit.fallback.time",
            "ratelimit.rules.version", "ratelimit.rules.stale", "ratelimit.events", "ratelimit.events.backlog",
            "ratelimit.shed", "ratelimit.upstream.in.flight", "ratelimit.upstream.limit",
            "ratelimit.region.usage.buckets", "ratelimit.region.usage.overflow", "ratelimit.region.usage",
            "ratelimit.region.shares.moved", "ratelimit.region.shares.evicted", "ratelimit.region.shares.stale",
            "ratelimit.region.shares.records", "ratelimit.response.charges", "ratelimit.response.charged.tokens");

    /** Meters of a state or an identifier rather than an amount: no unit applies. */
    private static final Set<String> DIMENSIONLESS = Set.of("ratelimit.rules.version", "ratelimit.rules.stale",
            "ratelimit.region.shares.stale", "ratelimit.store.breaker.state");

    private static final Pattern NAME = Pattern.compile("ratelimit(\\.[a-z][a-z0-9]*)+");
    private static final Pattern TAG_KEY = Pattern.compile("[a-z][a-z0-9]*([._][a-z0-9]+)*");
    /** Units go in the base unit, and Prometheus's suffixes are its own to add. */
    private static final Set<String> UNIT_WORDS = Set.of("seconds", "second", "millis", "milliseconds", "ms",
            "nanos", "nanoseconds", "bytes", "kilobytes", "megabytes", "percent", "ratio", "total", "count", "sum");
    /** What identifies a caller or a request: never a tag. */
    private static final Set<String> CALLER_TAG_KEYS = Set.of("client", "client_id", "clientid", "client.id",
            "api_key", "apikey", "api.key", "key", "user", "tenant", "ip", "client_ip", "address", "path", "uri",
            "url");

    @RegisterExtension
    static final RedisServerExtension redis = RedisServerExtension.shared();

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class, DataRedisAutoConfiguration.class,
                    DataRedisReactiveAutoConfiguration.class, RateLimitRedisAutoConfiguration.class,
                    RateLimitRegionsAutoConfiguration.class, RateLimitAutoConfiguration.class,
                    RateLimitActuatorAutoConfiguration.class, RateLimitEventsAutoConfiguration.class,
                    RateLimitSheddingAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withPropertyValues("ratelimit.store.timeout=2s", "ratelimit.default-tier=free",
                    "ratelimit.api-key.unknown.policy=default-tier",
                    "ratelimit.tiers.free.limits.default.capacity=20",
                    "ratelimit.tiers.free.limits.default.refill-tokens=1",
                    "ratelimit.tiers.free.limits.default.refill-period=1h", "ratelimit.rules.watch.capacity=2",
                    "ratelimit.rules.watch.refill-tokens=1", "ratelimit.rules.watch.refill-period=1h",
                    "ratelimit.rules.watch.mode=shadow", "ratelimit.shedding.upstreams.api.max-in-flight=50",
                    "ratelimit.events.kafka.bootstrap-servers=" + NO_BROKER, "ratelimit.regions.local=us-east-1",
                    "ratelimit.regions.weights[us-east-1]=1", "ratelimit.regions.weights[eu-central-1]=1",
                    "ratelimit.regions.kafka.bootstrap-servers=" + NO_BROKER);

    @Test
    void everyMeterFollowsMicrometersConventionsAndTheRuleTagStaysBoundedAsOverridesComeAndGo() {
        runner.withPropertyValues("spring.data.redis.url=" + redis.url()).run(context -> {
            assertThat(context).hasNotFailed();
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            RuleAdmin admin = context.getBean(RuleAdmin.class);
            decide(context, "configured-caller", 5);
            int before = registry.getMeters().size();

            for (int i = 0; i < OVERRIDES; i++) {
                // half compete with the tier's limit for their customer, half are rules of their own group
                assertThat(admin.put("customer-" + i, override(i, i % 2 == 0)).isApplied()).isTrue();
                decide(context, "customer-" + i + "-key", 3);
            }
            decide(context, "configured-caller", 1);

            assertConventions(registry.getMeters());
            assertThat(ruleTags(registry)).as("one value per configured rule, the overrides by group")
                    .containsExactlyInAnyOrder("free.default", "watch", "tier-default", "runtime");
            assertThat(registry.getMeters().size() - before).as("meters the overrides added, however many")
                    .isBetween(1, 6);

            for (int i = 0; i < OVERRIDES; i++) {
                assertThat(admin.delete("customer-" + i).isApplied()).isTrue();
            }
            assertThat(ruleTags(registry)).as("the overrides' meters removed with them")
                    .containsExactlyInAnyOrder("free.default", "watch");
            assertThat(registry.getMeters()).hasSize(before);
            assertThat(registry.get("ratelimit.store.breaker.state").gauges()).extracting(g -> g.getId().getTag(
                    "state") + "=" + g.value()).containsExactlyInAnyOrder("closed=1.0", "open=0.0", "half_open=0.0");
        });
    }

    private static void assertConventions(List<Meter> meters) {
        Set<String> names = new TreeSet<>();
        PrometheusNamingConvention prometheus = new PrometheusNamingConvention();
        Set<String> callers = Set.of("configured-caller", ClientIds.unkeyed().of("configured-caller"),
                "customer-1-key", ClientIds.unkeyed().of("customer-1-key"));
        for (Meter meter : meters) {
            Meter.Id id = meter.getId();
            names.add(id.getName());
            assertThat(id.getName()).as("lower-case, dot-separated, under ratelimit.").matches(NAME);
            assertThat(id.getName().split("\\.")).as("%s: a unit in the name", id.getName())
                    .doesNotContainAnyElementsOf(UNIT_WORDS);
            assertThat(id.getDescription()).as("%s: description", id.getName()).isNotBlank();
            if (DIMENSIONLESS.contains(id.getName())) {
                assertThat(id.getBaseUnit()).as("%s: a state has no unit", id.getName()).isNull();
            }
            else {
                assertThat(id.getBaseUnit()).as("%s: base unit", id.getName()).isNotBlank();
                String exported = prometheus.name(id.getName(), id.getType(), id.getBaseUnit());
                assertThat(exported).as("the unit once in the Prometheus name")
                        .doesNotContain("_" + id.getBaseUnit() + "_" + id.getBaseUnit());
            }
            for (Tag tag : id.getTags()) {
                assertThat(tag.getKey()).as("%s: tag key", id.getName()).matches(TAG_KEY)
                        .isNotIn(CALLER_TAG_KEYS);
                assertThat(tag.getValue()).as("%s: tag value", id.getName()).isNotIn(callers);
            }
        }
        assertThat(names).as("every meter of the limiter registered").containsAll(EVERY_METER);
    }

    /** The distinct values of the rule tag over every meter that has it. */
    private static Set<String> ruleTags(MeterRegistry registry) {
        Set<String> values = new TreeSet<>();
        registry.getMeters().forEach(meter -> {
            String rule = meter.getId().getTag("rule");
            if (rule != null) {
                values.add(rule);
            }
        });
        return values;
    }

    /** Decides {@code times} requests of one caller, as the gateway filter does, and reports them to the listener. */
    private static void decide(AssertableReactiveWebApplicationContext context, String apiKey, int times) {
        RateLimitEvaluator evaluator = context.getBean(RateLimitEvaluator.class);
        VerdictListener listener = context.getBean("micrometerVerdictListener", VerdictListener.class);
        RequestAttributes request = new RequestAttributes(apiKey, null, null, null, "api", "/x", "default",
                evaluator.rules().tierFor(apiKey), 1);
        for (int i = 0; i < times; i++) {
            Verdict verdict = evaluator.check(request, new RequestPermits()).block(Duration.ofSeconds(5));
            listener.onVerdict(request, verdict);
        }
    }

    /** A customer's override: in the tier's group (beating its limit), or in a group of its own. */
    private static Map<String, Object> override(int i, boolean inTierGroup) {
        Map<String, Object> spec = new LinkedHashMap<>();
        if (inTierGroup) {
            spec.put("group", "tier-default");
        }
        spec.put("match.api-keys", List.of("customer-" + i + "-key"));
        spec.put("capacity", 2);
        spec.put("refill-tokens", 1);
        spec.put("refill-period", "1h");
        return spec;
    }
}
