package dev.ratelimiter.gateway;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.Metering;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleCosts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rules' {@code cost-expression}s ({@link Metering#costExpression()}), evaluated over the request with the same
 * sandboxed root as identity expressions ({@link ExpressionSource}): headers, query, path, method, route, plus
 * {@code headerLengths} and {@code contentLength}. The body is never read: the decision comes before it, and a
 * body read to price a request would hold the request (and its connection) until the client sent it all; its size is
 * known up front from {@code Content-Length}. The principal is not offered: a cost is the request's, not the caller's.
 *
 * <p>A value that is no number (absent, a word, a map), negative, or an expression that throws gives the rule's
 * {@code fallback-cost}, a larger one {@code max-cost}: never a 5xx, never a free request. A header or query parameter
 * the expression names, sent twice, costs {@code max-cost} (an upstream reads one of the copies). Said with a bounded
 * WARN.
 */
public final class CostExpressions {

    private static final Logger logger = LoggerFactory.getLogger(CostExpressions.class);

    /** Rules come and go through the rules API: the parsed expressions are kept for this many texts at most. */
    private static final int MAX_PARSED = 1024;

    private final Map<String, ExpressionSource> parsed = new ConcurrentHashMap<>();
    private final ThrottledLog unusable = new ThrottledLog(logger);

    /**
     * Refuses an expression that does not parse or reaches beyond the request, naming {@code setting}: at start-up and
     * on a rules API write, before the rule can be used.
     */
    public static void validate(String setting, String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidLimitException(setting, setting + " is empty; give an expression over the request, such "
                    + "as headers['X-Batch-Size'].");
        }
        parse(setting, text);
    }

    private static ExpressionSource parse(String setting, String text) {
        // claims "readable" so that reading them is refused below, as the principal is, whatever the classpath
        ExpressionSource source = new ExpressionSource(setting, text, true);
        if (source.readsPrincipal()) {
            throw new InvalidLimitException(setting, setting + " '" + text + "' reads the principal or its claims; a "
                    + "cost expression reads the request only (headers, query, path, method, route, headerLengths, "
                    + "contentLength).");
        }
        return source;
    }

    /** The costs of one request: each rule with a cost expression evaluated over it, every other rule standard. */
    public RuleCosts of(IdentityRequest request) {
        if (request == null) {
            return RuleCosts.STANDARD;
        }
        return (rule, standard) -> {
            Metering metering = rule.metering();
            return metering == null || metering.costExpression() == null ? standard : cost(rule, metering, request);
        };
    }

    int cost(Rule rule, Metering metering, IdentityRequest request) {
        Object value;
        try {
            ExpressionSource source = expression(rule, metering.costExpression());
            if (source.repeated(request) != null) {
                // read as absent it would cost the fallback, while the upstream reads one of the copies: the most
                unusable.warn("The cost-expression of rule '{}' reads {}, sent twice; the request costs max-cost {}",
                        rule.id(), source.repeated(request), metering.maxCost());
                return metering.maxCost();
            }
            value = source.evaluate(request, null);
        }
        catch (RuntimeException ex) {
            unusable.warn("The cost-expression of rule '{}' failed on a request ({}); it costs the fallback {}",
                    rule.id(), ex.getMessage(), metering.fallbackCost());
            return metering.fallbackCost();
        }
        Number number = number(value);
        int cost = metering.clamp(number);
        if (number == null || number.doubleValue() < 0 || Double.isNaN(number.doubleValue())) {
            unusable.warn("The cost-expression of rule '{}' gave no cost ({}); the request costs the fallback {}",
                    rule.id(), describe(value), metering.fallbackCost());
        }
        else if (number.doubleValue() > metering.maxCost()) {
            unusable.warn("The cost-expression of rule '{}' gave {}, more than max-cost; the request costs {}",
                    rule.id(), number, cost);
        }
        return cost;
    }

    private ExpressionSource expression(Rule rule, String text) {
        ExpressionSource source = parsed.get(text);
        if (source == null) {
            if (parsed.size() >= MAX_PARSED) {
                parsed.clear();
            }
            source = parsed.computeIfAbsent(text, t -> parse("the cost-expression of rule '" + rule.id() + "'", t));
        }
        return source;
    }

    /** A number, or a string that is one (a header's value); null for anything else. */
    static Number number(Object value) {
        if (value instanceof Number number) {
            return number;
        }
        if (value instanceof String text) {
            String trimmed = text.trim();
            if (trimmed.isEmpty() || trimmed.length() > 32) {
                return null;
            }
            try {
                return Double.parseDouble(trimmed);
            }
            catch (NumberFormatException ex) {
                return null;
            }
        }
        return null;
    }

    private static String describe(Object value) {
        if (value == null) {
            return "no value";
        }
        String text = value instanceof String ? "'" + value + "'" : value.getClass().getSimpleName();
        return text.length() > 40 ? text.substring(0, 40) + "…" : text;
    }
}
