package dev.ratelimiter.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How load shedding is configured, as plain values: what the Spring properties produce and {@link LoadShedders#of}
 * checks and builds from.
 *
 * @param source the settings' prefix, named in messages about them (e.g. {@code ratelimit.shedding})
 * @param targetUtilisation utilisation past which the lowest priorities are shed, between 0 and 1
 * @param defaultPriority priority of a request whose route names none, as written (critical, normal, background)
 * @param upstreams the protected upstreams by name, in the order they were configured
 */
public record LoadShedderSettings(String source, double targetUtilisation, String defaultPriority,
        Map<String, Upstream> upstreams) {

    public LoadShedderSettings {
        // Kept in order: the shedders are listed, and a route claimed twice is blamed on the later upstream, as written.
        upstreams = Collections.unmodifiableMap(new LinkedHashMap<>(upstreams));
    }

    /**
     * One protected upstream.
     *
     * @param routeIds the routes that lead there; none means the route whose id is the upstream's name
     * @param maxInFlight requests this instance may have in progress there (the ceiling, when adaptive)
     * @param adaptive whether the limit is learnt from latency (Gradient2) rather than held at maxInFlight
     */
    public record Upstream(List<String> routeIds, int maxInFlight, boolean adaptive) {

        public Upstream {
            routeIds = routeIds == null ? List.of() : List.copyOf(routeIds);
        }
    }
}
