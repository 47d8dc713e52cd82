package dev.ratelimiter.gateway;

import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a route's metadata tells the limiter, on either gateway flavour: {@value #ROUTE_CLASS} names the route class
 * (default {@value #DEFAULT_ROUTE_CLASS}), {@value #COST} the tokens a request costs (default 1), and
 * {@value #ENABLED}{@code : false} takes the route out of the rate limiter altogether.
 */
public final class RouteMetadata {

    public static final String ROUTE_CLASS = "route-class";
    public static final String COST = "ratelimit-cost";
    public static final String ENABLED = "ratelimit-enabled";
    public static final String DEFAULT_ROUTE_CLASS = "default";

    private static final Logger logger = LoggerFactory.getLogger(RouteMetadata.class);

    private RouteMetadata() {
    }

    /** The route class the metadata names, else {@value #DEFAULT_ROUTE_CLASS}. */
    public static String routeClass(Map<String, Object> metadata) {
        return String.valueOf(metadata.getOrDefault(ROUTE_CLASS, DEFAULT_ROUTE_CLASS));
    }

    /** Whether the limiter sees the route's requests: unless the metadata says {@code ratelimit-enabled: false}. */
    public static boolean limited(Map<String, Object> metadata) {
        Object enabled = metadata.get(ENABLED);
        return enabled == null || !"false".equalsIgnoreCase(enabled.toString().trim());
    }

    /** The tokens one request costs: the metadata's whole number, at least 1; 1 when it names none or garbage. */
    public static int cost(Map<String, Object> metadata) {
        Object value = metadata.get(COST);
        if (value == null) {
            return 1;
        }
        try {
            int cost = value instanceof Number number ? number.intValue() : Integer.parseInt(value.toString().trim());
            return Math.max(1, cost);
        }
        catch (NumberFormatException ex) {
            logger.warn("Route metadata {}='{}' is not a whole number; using cost 1", COST, value);
            return 1;
        }
    }
}
