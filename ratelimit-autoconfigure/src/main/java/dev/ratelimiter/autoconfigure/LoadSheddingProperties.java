package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.LoadShedderSettings;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Priority load shedding: which upstreams are protected, how full they may get, and how a request's priority is
 * found. Only upstreams listed under {@code upstreams} are ever shed.
 */
@ConfigurationProperties("ratelimit.shedding")
public class LoadSheddingProperties {

    /**
     * Whether load shedding is on. It only acts on the upstreams configured below.
     */
    private boolean enabled = true;

    /**
     * Utilisation (requests in progress / the upstream's limit) past which the lowest priorities are shed: background
     * over the first third of the remaining headroom, normal over the second; user-facing only at the limit.
     */
    private double targetUtilisation = 0.85;

    /**
     * Priority of a request whose route has no ratelimit-priority metadata: critical (user-facing), normal or
     * background.
     */
    private String defaultPriority = "normal";

    /**
     * Request header a caller may state a priority in (critical, normal, background). Unless trusted it can only
     * lower the route's priority. Empty to ignore any header.
     */
    private String priorityHeader = "X-Request-Priority";

    /**
     * Whether the priority header may also raise a request's priority. Only for gateways whose callers cannot set it
     * themselves (it is set by a trusted proxy in front).
     */
    private boolean trustPriorityHeader = false;

    /**
     * Retry-After sent with a shed request's 503.
     */
    private Duration retryAfter = Duration.ofSeconds(1);

    /**
     * Order of the shedding filter; by default right after the rate-limit filter.
     */
    private Integer filterOrder;

    /**
     * Protected upstreams by name.
     */
    private final Map<String, Upstream> upstreams = new LinkedHashMap<>();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public double getTargetUtilisation() {
        return targetUtilisation;
    }

    public void setTargetUtilisation(double targetUtilisation) {
        this.targetUtilisation = targetUtilisation;
    }

    public String getDefaultPriority() {
        return defaultPriority;
    }

    public void setDefaultPriority(String defaultPriority) {
        this.defaultPriority = defaultPriority;
    }

    public String getPriorityHeader() {
        return priorityHeader;
    }

    public void setPriorityHeader(String priorityHeader) {
        this.priorityHeader = priorityHeader;
    }

    public boolean isTrustPriorityHeader() {
        return trustPriorityHeader;
    }

    public void setTrustPriorityHeader(boolean trustPriorityHeader) {
        this.trustPriorityHeader = trustPriorityHeader;
    }

    public Duration getRetryAfter() {
        return retryAfter;
    }

    public void setRetryAfter(Duration retryAfter) {
        this.retryAfter = retryAfter;
    }

    public Integer getFilterOrder() {
        return filterOrder;
    }

    public void setFilterOrder(Integer filterOrder) {
        this.filterOrder = filterOrder;
    }

    public Map<String, Upstream> getUpstreams() {
        return upstreams;
    }

    /** These settings as the core's plain value, named by their prefix in messages. */
    public LoadShedderSettings settings() {
        Map<String, LoadShedderSettings.Upstream> byName = new LinkedHashMap<>();
        upstreams.forEach((name, upstream) -> byName.put(name, new LoadShedderSettings.Upstream(
                upstream.getRouteIds(), upstream.getMaxInFlight(), upstream.isAdaptive())));
        return new LoadShedderSettings("ratelimit.shedding", targetUtilisation, defaultPriority, byName);
    }

    /** One protected upstream. */
    public static class Upstream {

        /**
         * Gateway routes that lead to this upstream; they share its capacity. Defaults to the route whose id is the
         * upstream's name.
         */
        private List<String> routeIds = new ArrayList<>();

        /**
         * Requests this gateway instance may have in progress at the upstream: the limit itself, or with adaptive
         * the ceiling of the learnt limit. Size it as the upstream's capacity divided by the gateway instances.
         */
        private int maxInFlight;

        /**
         * Learn the limit from the upstream's latency (Netflix concurrency-limits' Gradient2) instead of holding
         * max-in-flight fixed: the limit falls as latency rises above its no-load level.
         */
        private boolean adaptive = false;

        public List<String> getRouteIds() {
            return routeIds;
        }

        public void setRouteIds(List<String> routeIds) {
            this.routeIds = routeIds;
        }

        public int getMaxInFlight() {
            return maxInFlight;
        }

        public void setMaxInFlight(int maxInFlight) {
            this.maxInFlight = maxInFlight;
        }

        public boolean isAdaptive() {
            return adaptive;
        }

        public void setAdaptive(boolean adaptive) {
            this.adaptive = adaptive;
        }
    }
}
