package dev.ratelimiter.core;

/**
 * How a rule's cost is measured when it is not a constant: from the request, by an expression the gateway evaluates
 * (the core only carries its text), or from the response, by the amount the upstream reports it used.
 *
 * @param costExpression an expression over the request giving its cost (e.g. {@code headers['X-Batch-Size']}), or
 * null; the gateway parses it, the core never does
 * @param maxCost the most a request may cost by the expression: a larger value is clamped to it
 * @param fallbackCost the cost of a request whose expression gives no usable number (absent, not a number, negative,
 * failing)
 * @param fromResponse what to charge when the response completes, or null
 */
public record Metering(String costExpression, int maxCost, int fallbackCost, ResponseCharge fromResponse) {

    /** A cost read from the request by {@code expression}. */
    public static Metering fromRequest(String expression, int maxCost, int fallbackCost) {
        return new Metering(expression, maxCost, fallbackCost, null);
    }

    /** The amount the upstream reports, charged when the response completes. */
    public static Metering fromResponse(ResponseCharge charge) {
        return new Metering(null, 0, 0, charge);
    }

    /** The value an expression gave, as the cost to take: clamped to [1, max-cost], else the fallback cost. */
    public int clamp(Number value) {
        if (value == null) {
            return fallbackCost;
        }
        double number = value.doubleValue();
        if (Double.isNaN(number) || number < 0) {
            return fallbackCost;
        }
        return (int) Math.max(1, Math.min(maxCost, Math.ceil(number)));
    }

    void validate(String source, Limit limit, int cost, StoreMode storeMode) {
        if (costExpression != null && fromResponse != null) {
            throw new InvalidLimitException("cost-expression", source + " has both a cost-expression and "
                    + "charge-from-response; each says what a request costs: use one.");
        }
        if ((costExpression != null || fromResponse != null) && cost > 0) {
            throw new InvalidLimitException("cost", source + " has a fixed cost " + cost + " and a "
                    + (costExpression != null ? "cost-expression" : "charge-from-response") + "; use one.");
        }
        if (limit.capsInProgress()) {
            throw new InvalidLimitException(costExpression != null ? "cost-expression" : "charge-from-response", source
                    + " caps requests in progress: every request takes one permit, so its cost cannot vary.");
        }
        if (costExpression != null) {
            if (costExpression.isBlank()) {
                throw new InvalidLimitException("cost-expression", source + " cost-expression is empty.");
            }
            if (maxCost < 1 || maxCost > limit.quota()) {
                throw new InvalidLimitException("max-cost", source + " max-cost must be between 1 and its quota "
                        + limit.quota() + " (a costlier request could never pass), but was " + maxCost + ".");
            }
            if (fallbackCost < 1 || fallbackCost > maxCost) {
                throw new InvalidLimitException("fallback-cost", source + " fallback-cost must be between 1 and "
                        + "max-cost " + maxCost + " (a request is never free), but was " + fallbackCost + ".");
            }
        }
        if (fromResponse != null) {
            fromResponse.validate(source, limit, storeMode);
        }
    }
}
