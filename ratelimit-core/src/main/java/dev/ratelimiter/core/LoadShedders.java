package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;

/**
 * The shedders by upstream and by route, built from checked settings.
 *
 * @param all one per upstream
 * @param byRoute the shedder each protected route goes through
 * @param defaultPriority for routes without priority metadata
 */
public record LoadShedders(List<LoadShedder> all, Map<String, LoadShedder> byRoute, Priority defaultPriority) {

    /**
     * One shedder per configured upstream.
     *
     * @throws InvalidLimitException naming the setting, when a setting cannot work or a route is claimed twice
     */
    public static LoadShedders of(LoadShedderSettings settings) {
        String prefix = settings.source() + ".";
        double target = settings.targetUtilisation();
        if (!(target > 0 && target < 1)) {
            throw new InvalidLimitException(prefix + "target-utilisation", prefix + "target-utilisation must be "
                    + "between 0 and 1 (for example 0.85), but was " + target + ".");
        }
        Priority defaultPriority = Priority.parse(settings.defaultPriority());
        if (defaultPriority == null) {
            throw new InvalidLimitException(prefix + "default-priority", prefix + "default-priority must be "
                    + "critical, normal or background, but was '" + settings.defaultPriority() + "'.");
        }
        List<LoadShedder> all = new ArrayList<>();
        Map<String, LoadShedder> byRoute = new LinkedHashMap<>();
        settings.upstreams().forEach((name, upstream) -> {
            String source = prefix + "upstreams." + name + ".";
            if (upstream.maxInFlight() < 1) {
                throw new InvalidLimitException(source + "max-in-flight", source + "max-in-flight must be at "
                        + "least 1 (requests this instance may have in progress there), but was "
                        + upstream.maxInFlight() + ".");
            }
            LoadShedder shedder = new LoadShedder(name, limitOf(upstream), target,
                    () -> ThreadLocalRandom.current().nextDouble(), System::nanoTime);
            all.add(shedder);
            List<String> routes = upstream.routeIds().isEmpty() ? List.of(name) : upstream.routeIds();
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

    /** Fixed at max-in-flight, or learnt by Gradient2: from half of max-in-flight, within [min(it, 4), it]. */
    static Limit limitOf(LoadShedderSettings.Upstream upstream) {
        if (!upstream.adaptive()) {
            return FixedLimit.of(upstream.maxInFlight());
        }
        return Gradient2Limit.newBuilder()
                .initialLimit(Math.max(1, upstream.maxInFlight() / 2))
                .minLimit(Math.min(upstream.maxInFlight(), 4))
                .maxConcurrency(upstream.maxInFlight())
                .build();
    }
}
