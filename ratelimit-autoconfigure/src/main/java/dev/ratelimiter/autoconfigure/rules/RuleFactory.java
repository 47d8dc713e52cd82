package dev.ratelimiter.autoconfigure.rules;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.ratelimiter.autoconfigure.LimitProperties;
import dev.ratelimiter.autoconfigure.RuleProperties;
import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Metering;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.PolicyNames;
import dev.ratelimiter.core.ResponseCharge;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.gateway.CostExpressions;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * Turns rule settings, bound from {@code application.yml} or sent as a spec to the operator API, into the core's
 * validated {@link Rule}. Every refusal names the setting at fault.
 */
final class RuleFactory {

    /** Group of the rules generated from {@code ratelimit.tiers.<tier>.limits}. */
    static final String TIER_DEFAULT_GROUP = "tier-default";

    private RuleFactory() {
    }

    static Rule create(String id, RuleProperties settings, String source) {
        try {
            return createChecked(id, settings, source);
        }
        catch (InvalidLimitException ex) {
            throw ex;
        }
        catch (RuntimeException ex) {
            // A setting bound to nothing (an empty value in YAML) reaches code that needs it: refuse the rule by
            // name, never with a NullPointerException.
            String rule = source.substring(0, source.length() - 1);
            throw new InvalidLimitException(rule, rule + " cannot be used: a setting is missing or empty ("
                    + ex.getClass().getSimpleName() + (ex.getMessage() == null ? "" : ": " + ex.getMessage()) + ")");
        }
    }

    private static Rule createChecked(String id, RuleProperties settings, String source) {
        PolicyNames.requireValid(source.substring(0, source.length() - 1), id);
        RuleProperties.Match match = settings.getMatch();
        for (String path : match.getPaths()) {
            if (!path.startsWith("/")) {
                throw new InvalidLimitException(source + "match.paths", source + "match.paths contains '" + path
                        + "', but a path must start with '/'.");
            }
        }
        match.getTiers().forEach(tier -> PolicyNames.requireValid(source + "match.tiers", tier));
        match.getRouteClasses().forEach(routeClass -> PolicyNames.requireValid(source + "match.route-classes", routeClass));
        String group = settings.getGroup() != null ? settings.getGroup() : id;
        Limit limit = limit(settings, source);
        Metering metering = metering(settings, limit, source);
        try {
            return new Rule(id, group, new Match(match.getRouteIds(), match.getPaths(), match.getRouteClasses(),
                    match.getTiers(), match.getApiKeys()), settings.getKey(), limit, settings.getCost(),
                    settings.getMode(), settings.getFailureMode(), settings.getStoreMode(), settings.getShards(),
                    settings.getWhenMissing(), settings.getScope(), metering);
        }
        catch (InvalidLimitException ex) {
            throw named(ex, id, source);
        }
    }

    /** A cost from the request or from the response; null for a fixed cost. The expression is checked here. */
    private static Metering metering(RuleProperties settings, Limit limit, String source) {
        RuleProperties.ChargeFromResponse response = settings.getChargeFromResponse();
        if (settings.getCostExpression() != null) {
            CostExpressions.validate(source + "cost-expression", settings.getCostExpression());
            int maxCost = settings.getMaxCost() != null ? settings.getMaxCost()
                    : (int) Math.min(Integer.MAX_VALUE, limit.quota());
            return new Metering(settings.getCostExpression(), maxCost, settings.getFallbackCost(),
                    response.configured() ? responseCharge(response) : null);
        }
        return response.configured() ? Metering.fromResponse(responseCharge(response)) : null;
    }

    private static ResponseCharge responseCharge(RuleProperties.ChargeFromResponse response) {
        return new ResponseCharge(response.getHeader(), response.getJsonField(), response.getMinimum());
    }

    /** The core names a rule by id; configuration users know it by its setting prefix. */
    private static InvalidLimitException named(InvalidLimitException ex, String id, String source) {
        return new InvalidLimitException(source + ex.setting(), ex.getMessage().replace("rule '" + id + "' ",
                source.substring(0, source.length() - 1) + " "));
    }

    /** The rule a tier's per-route-class limit stands for: per API key, in the tier-default group. */
    static Rule tierDefault(String tier, String routeClass, LimitProperties settings) {
        String source = "ratelimit.tiers." + tier + ".limits." + routeClass + ".";
        PolicyNames.requireValid("ratelimit.tiers." + tier, tier);
        PolicyNames.requireValid("ratelimit.tiers." + tier + ".limits." + routeClass, routeClass);
        Set<String> routeClasses = "default".equals(routeClass) ? Set.of() : Set.of(routeClass);
        String id = tierDefaultId(tier, routeClass);
        Limit limit = limit(settings, source);
        try {
            return new Rule(id, TIER_DEFAULT_GROUP, new Match(Set.of(), List.of(), routeClasses, Set.of(tier),
                    Set.of()), List.of(Dimension.API_KEY), limit, 0, Mode.ENFORCE, settings.getFailureMode(),
                    settings.getStoreMode(), 1, null, settings.getScope());
        }
        catch (InvalidLimitException ex) {
            throw named(ex, id, source);
        }
    }

    /** The id of the rule {@code ratelimit.tiers.<tier>.limits.<routeClass>} stands for. */
    static String tierDefaultId(String tier, String routeClass) {
        return tier + "." + routeClass;
    }

    /** The bucket of API keys nobody listed, per client address ({@code ratelimit.api-key.unknown.limit}). */
    static Rule unknownKeys(LimitProperties settings) {
        String source = "ratelimit.api-key.unknown.limit.";
        Limit limit = limit(settings, source);
        // A rate per client address, never requests in progress.
        if (limit.capsInProgress()) {
            throw new InvalidLimitException(source + "algorithm", "The bucket of unknown API keys limits a rate: use "
                    + "algorithm token-bucket or sliding-window.");
        }
        try {
            return new Rule(RuleSet.UNKNOWN_KEYS, RuleSet.UNKNOWN_KEYS, new Match(Set.of(), List.of(), Set.of(),
                    Set.of(RuleSet.UNKNOWN_KEYS), Set.of()), List.of(Dimension.CLIENT_IP), limit, 0, Mode.ENFORCE,
                    settings.getFailureMode(), settings.getStoreMode(), 1, null, settings.getScope());
        }
        catch (InvalidLimitException ex) {
            throw named(ex, RuleSet.UNKNOWN_KEYS, source);
        }
    }

    /**
     * Binds a spec of {@code name=value} pairs (as the rule store holds them) exactly as {@code application.yml}
     * would be bound, so both paths accept and refuse the same things.
     */
    static RuleProperties bind(String id, Map<String, String> spec) {
        return bind(id, spec, false);
    }

    /**
     * {@link #bind(String, Map)}, refusing names that bind to no setting: for a write, where a misspelt name would
     * otherwise be stored as it is and ignored (a misspelt {@code match.api-keys} would store the keys as sent and
     * make the override apply to everybody). The store's own specs are read leniently: a name an older instance does
     * not know must not cost it the rule.
     */
    static RuleProperties bindStrictly(String id, Map<String, String> spec) {
        return bind(id, spec, true);
    }

    private static RuleProperties bind(String id, Map<String, String> spec, boolean strict) {
        String prefix = "ratelimit.rules." + id;
        Map<String, String> qualified = new LinkedHashMap<>();
        spec.forEach((name, value) -> {
            if (value == null || value.isBlank()) {
                // YAML would bind it to null, and null is never a setting: say which one instead of failing later.
                throw new InvalidLimitException(prefix + "." + name, prefix + "." + name
                        + " is empty: give it a value or leave it out");
            }
            qualified.put(prefix + "." + name, value);
        });
        try {
            Binder binder = new Binder(new MapConfigurationPropertySource(qualified));
            return strict
                    ? binder.bindOrCreate(prefix, Bindable.of(RuleProperties.class),
                            new NoUnboundElementsBindHandler(BindHandler.DEFAULT))
                    : binder.bindOrCreate(prefix, Bindable.of(RuleProperties.class));
        }
        catch (BindException ex) {
            if (ex.getCause() instanceof UnboundConfigurationPropertiesException unbound) {
                String name = unbound.getUnboundProperties().iterator().next().getName().toString();
                throw new InvalidLimitException(name, name + " is not a rule setting (a misspelt or unknown name); "
                        + "nothing was written.");
            }
            String property = ex.getProperty() != null ? ex.getProperty().getName().toString() : prefix;
            String reason = rootMessage(ex);
            throw new InvalidLimitException(property, property + " cannot be used: " + reason);
        }
    }

    /** The limit {@code settings} describe: one case per {@link LimitProperties.Algorithm}. */
    private static Limit limit(LimitProperties settings, String source) {
        return switch (settings.getAlgorithm()) {
            case TOKEN_BUCKET -> TokenBucketLimit.of(source, settings.getCapacity(), settings.getRefillTokens(),
                    settings.getRefillPeriod());
            case SLIDING_WINDOW -> SlidingWindowLimit.of(source, settings.getLimit(), settings.getWindow());
            case CONCURRENCY -> ConcurrencyLimit.of(source, settings.getMaxInProgress(), settings.getLease());
            case CALENDAR_QUOTA -> CalendarQuotaLimit.of(source, settings.getLimit(), settings.getPeriod(),
                    settings.getZone(), settings.getAnchorDay(), settings.getWeekStart());
        };
    }

    private static String rootMessage(Throwable failure) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable t = failure; t != null && !chain.contains(t); t = t.getCause()) {
            chain.add(t);
        }
        return chain.get(chain.size() - 1).getMessage();
    }
}
