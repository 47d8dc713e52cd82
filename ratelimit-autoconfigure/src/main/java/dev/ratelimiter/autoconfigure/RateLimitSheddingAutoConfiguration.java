package dev.ratelimiter.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.Priority;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.LoadSheddingFilter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.context.annotation.Bean;

/**
 * Priority load shedding in front of the upstreams listed under {@code ratelimit.shedding.upstreams}: one
 * {@link LoadShedder} per upstream, a gateway filter right after the rate limiter, and per-upstream metrics.
 */
@AutoConfiguration(after = { RateLimitGatewayAutoConfiguration.class, RateLimitEventsAutoConfiguration.class,
        RateLimitActuatorAutoConfiguration.class })
@ConditionalOnClass(GlobalFilter.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = { "ratelimit.enabled", "ratelimit.shedding.enabled" }, matchIfMissing = true)
@EnableConfigurationProperties({ LoadSheddingProperties.class, RateLimitProperties.class })
public final class RateLimitSheddingAutoConfiguration {

    /** Every configured upstream's shedder, validated at start-up. */
    @Bean
    @ConditionalOnMissingBean
    LoadShedders rateLimitLoadShedders(LoadSheddingProperties properties,
            ObjectProvider<MeterRegistry> registries) {
        LoadShedders shedders = LoadShedders.of(properties);
        registries.ifAvailable(registry -> shedders.all().forEach(shedder -> bind(shedder, registry)));
        return shedders;
    }

    @Bean
    @ConditionalOnMissingBean
    LoadSheddingFilter rateLimitLoadSheddingFilter(LoadShedders shedders, LoadSheddingProperties properties,
            RateLimitProperties rateLimit, ObjectProvider<VerdictListener> listeners) {
        String header = properties.getPriorityHeader();
        int order = properties.getFilterOrder() != null ? properties.getFilterOrder() : rateLimit.getFilterOrder() + 1;
        return new LoadSheddingFilter(shedders.byRoute(), VerdictListener.all(listeners.orderedStream().toList()),
                shedders.defaultPriority(),
                header == null || header.isBlank() ? null : header.trim(), properties.isTrustPriorityHeader(),
                properties.getRetryAfter(), order);
    }

    private static void bind(LoadShedder shedder, MeterRegistry registry) {
        for (Priority priority : Priority.values()) {
            FunctionCounter.builder("ratelimit.shed", shedder, s -> s.shed(priority))
                    .description("Requests shed because the upstream was full")
                    .tag("upstream", shedder.upstream()).tag("priority", priority.label())
                    .register(registry);
        }
        Gauge.builder("ratelimit.upstream.in.flight", shedder, LoadShedder::inFlight)
                .description("Requests this instance has in progress at the upstream")
                .tag("upstream", shedder.upstream()).register(registry);
        Gauge.builder("ratelimit.upstream.limit", shedder, LoadShedder::limit)
                .description("The upstream's limit on requests in progress (fixed or learnt)")
                .tag("upstream", shedder.upstream()).register(registry);
    }

    /**
     * The shedders by upstream and by route.
     *
     * @param all one per upstream
     * @param byRoute the shedder each protected route goes through
     * @param defaultPriority for routes without priority metadata
     */
    public record LoadShedders(List<LoadShedder> all, Map<String, LoadShedder> byRoute, Priority defaultPriority) {

        static LoadShedders of(LoadSheddingProperties properties) {
            String prefix = "ratelimit.shedding.";
            double target = properties.getTargetUtilisation();
            if (!(target > 0 && target < 1)) {
                throw new InvalidLimitException(prefix + "target-utilisation", prefix + "target-utilisation must be "
                        + "between 0 and 1 (for example 0.85), but was " + target + ".");
            }
            Priority defaultPriority = Priority.parse(properties.getDefaultPriority());
            if (defaultPriority == null) {
                throw new InvalidLimitException(prefix + "default-priority", prefix + "default-priority must be "
                        + "critical, normal or background, but was '" + properties.getDefaultPriority() + "'.");
            }
            List<LoadShedder> all = new ArrayList<>();
            Map<String, LoadShedder> byRoute = new LinkedHashMap<>();
            properties.getUpstreams().forEach((name, upstream) -> {
                String source = prefix + "upstreams." + name + ".";
                if (upstream.getMaxInFlight() < 1) {
                    throw new InvalidLimitException(source + "max-in-flight", source + "max-in-flight must be at "
                            + "least 1 (requests this instance may have in progress there), but was "
                            + upstream.getMaxInFlight() + ".");
                }
                LoadShedder shedder = new LoadShedder(name, limit(upstream), target,
                        () -> ThreadLocalRandom.current().nextDouble(), System::nanoTime);
                all.add(shedder);
                List<String> routes = upstream.getRouteIds().isEmpty() ? List.of(name) : upstream.getRouteIds();
                for (String route : routes) {
                    LoadShedder previous = byRoute.putIfAbsent(route, shedder);
                    if (previous != null) {
                        throw new InvalidLimitException(source + "route-ids", source + "route-ids names route '"
                                + route + "', which upstream '" + previous.upstream() + "' already protects.");
                    }
                }
            });
            return new LoadShedders(List.copyOf(all), Map.copyOf(byRoute), defaultPriority);
        }

        private static Limit limit(LoadSheddingProperties.Upstream upstream) {
            if (!upstream.isAdaptive()) {
                return FixedLimit.of(upstream.getMaxInFlight());
            }
            return Gradient2Limit.newBuilder()
                    .initialLimit(Math.max(1, upstream.getMaxInFlight() / 2))
                    .minLimit(Math.min(upstream.getMaxInFlight(), 4))
                    .maxConcurrency(upstream.getMaxInFlight())
                    .build();
        }
    }
}
