package dev.ratelimiter.autoconfigure.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.ratelimiter.autoconfigure.rules.RuleChangeResponse;
import dev.ratelimiter.autoconfigure.rules.RuleView;
import dev.ratelimiter.autoconfigure.security.OperatorRoles;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleAdmin;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * {@code /actuator/ratelimit}: the rules in force with their version and the switches (GET); one rule (GET
 * {@code /{id}}); add or replace a runtime rule (POST {@code /{id}}, see {@link #put}); delete a runtime rule
 * (DELETE {@code /{id}}).
 */
@Endpoint(id = "ratelimit")
public class RateLimitRulesEndpoint {

    private final RuleAdmin admin;
    private final RuleView rules;
    private final RateLimitView view;
    private final OperatorRoles roles;

    public RateLimitRulesEndpoint(RuleAdmin admin, RuleView rules, RateLimitView view, OperatorRoles roles) {
        this.admin = admin;
        this.rules = rules;
        this.view = view;
        this.roles = roles;
    }

    /**
     * The rules in force with their version and switches, the store and its breaker, the instances seen, the clients
     * denied most often recently (hashed ids) and the latest decisions.
     */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> rules(SecurityContext caller) {
        WebEndpointResponse<Map<String, Object>> refused = roles.refuseUnlessReader(caller);
        if (refused != null) {
            return refused;
        }
        Map<String, Object> all = new LinkedHashMap<>(rules.describe());
        view.addTo(all);
        return new WebEndpointResponse<>(all, 200);
    }

    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> rule(@Selector String id, SecurityContext caller) {
        WebEndpointResponse<Map<String, Object>> refused = roles.refuseUnlessReader(caller);
        if (refused != null) {
            return refused;
        }
        Rule rule = rules.rule(id);
        if (rule == null) {
            return new WebEndpointResponse<>(Map.of("error", "unknown_rule", "reason", "There is no rule '" + id + "'."),
                    404);
        }
        return new WebEndpointResponse<>(rules.describe(rule), 200);
    }

    /**
     * Adds or replaces a runtime rule. Actuator write operations take a flat JSON object of string (or number)
     * values, so lists are comma-separated and the match criteria are flattened: {@code {"algorithm":
     * "token-bucket", "capacity": 100, "refillTokens": 100, "refillPeriod": "1m", "matchApiKeys": "acme-key",
     * "group": "tier-default"}}. {@code {"enabled": false}} alone switches the rule (or tier default) of that id off
     * on every instance until the runtime rule is deleted.
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> put(@Selector String id, @Nullable String group,
            @Nullable String key, @Nullable String algorithm, @Nullable String capacity, @Nullable String refillTokens,
            @Nullable String refillPeriod, @Nullable String limit, @Nullable String window,
            @Nullable String maxInProgress, @Nullable String lease, @Nullable String period, @Nullable String zone,
            @Nullable String anchorDay, @Nullable String weekStart, @Nullable String cost,
            @Nullable String mode, @Nullable String failureMode, @Nullable String storeMode, @Nullable String shards,
            @Nullable String whenMissing, @Nullable String scope, @Nullable String enabled,
            @Nullable String matchRouteIds,
            @Nullable String matchPaths, @Nullable String matchRouteClasses, @Nullable String matchTiers,
            @Nullable String matchApiKeys, SecurityContext caller) {
        WebEndpointResponse<Map<String, Object>> refused = roles.refuseUnlessAdmin(caller);
        if (refused != null) {
            return refused;
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("group", group);
        settings.put("key", key);
        settings.put("algorithm", algorithm);
        settings.put("capacity", capacity);
        settings.put("refillTokens", refillTokens);
        settings.put("refillPeriod", refillPeriod);
        settings.put("limit", limit);
        settings.put("window", window);
        settings.put("maxInProgress", maxInProgress);
        settings.put("lease", lease);
        settings.put("period", period);
        settings.put("zone", zone);
        settings.put("anchorDay", anchorDay);
        settings.put("weekStart", weekStart);
        settings.put("cost", cost);
        settings.put("mode", mode);
        settings.put("failureMode", failureMode);
        settings.put("storeMode", storeMode);
        settings.put("shards", shards);
        settings.put("whenMissing", whenMissing);
        settings.put("scope", scope);
        settings.put("enabled", enabled);
        settings.put("match.routeIds", matchRouteIds);
        settings.put("match.paths", matchPaths);
        settings.put("match.routeClasses", matchRouteClasses);
        settings.put("match.tiers", matchTiers);
        settings.put("match.apiKeys", matchApiKeys);
        return RuleChangeResponse.of(admin.put(id, settings, operator(caller)));
    }

    @DeleteOperation
    public WebEndpointResponse<Map<String, Object>> delete(@Selector String id, SecurityContext caller) {
        WebEndpointResponse<Map<String, Object>> refused = roles.refuseUnlessAdmin(caller);
        if (refused != null) {
            return refused;
        }
        return RuleChangeResponse.of(admin.delete(id, operator(caller)));
    }

    /** Who is calling, for the audit log: the authenticated user, or a mark that nobody was asked. */
    static String operator(SecurityContext caller) {
        return caller.getPrincipal() != null ? caller.getPrincipal().getName() : "(unauthenticated)";
    }
}
