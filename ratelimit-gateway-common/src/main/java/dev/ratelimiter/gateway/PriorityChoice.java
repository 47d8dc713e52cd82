package dev.ratelimiter.gateway;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimiter.core.Priority;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A request's priority for load shedding, the same on both gateway flavours: its route's
 * {@value #PRIORITY_METADATA} metadata, else the default. A priority header may lower it (a client can declare its
 * own work background); it may raise it only when the header is trusted. An unknown value in the header is ignored;
 * an unknown value in a route's metadata is warned about once per route.
 */
public final class PriorityChoice {

    public static final String PRIORITY_METADATA = "ratelimit-priority";

    private static final Logger logger = LoggerFactory.getLogger(PriorityChoice.class);

    private final Priority defaultPriority;
    private final String header;
    private final boolean headerTrusted;
    private final Set<String> warnedRoutes = ConcurrentHashMap.newKeySet();

    /** @param header the request header a priority may be sent in, or null (blank: null) to ignore any */
    public PriorityChoice(Priority defaultPriority, String header, boolean headerTrusted) {
        this.defaultPriority = defaultPriority;
        this.header = header == null || header.isBlank() ? null : header.trim();
        this.headerTrusted = headerTrusted;
    }

    /** The header a priority may be sent in, or null. */
    public String header() {
        return header;
    }

    /**
     * @param configured the route's {@value #PRIORITY_METADATA} metadata, or null
     * @param sent the priority header's value, or null
     */
    public Priority choose(String routeId, Object configured, String sent) {
        Priority priority = defaultPriority;
        if (configured != null) {
            Priority parsed = Priority.parse(configured.toString());
            if (parsed != null) {
                priority = parsed;
            }
            else if (warnedRoutes.add(routeId)) {
                logger.warn("Route {} has {}='{}', which is not critical, normal or background; using {}", routeId,
                        PRIORITY_METADATA, configured, defaultPriority.label());
            }
        }
        Priority declared = header == null ? null : Priority.parse(sent);
        if (declared == null) {
            return priority;
        }
        return headerTrusted ? declared : priority.atMost(declared);
    }
}
