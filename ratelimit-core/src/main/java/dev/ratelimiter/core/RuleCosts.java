package dev.ratelimiter.core;

/**
 * The cost of one request under each rule, where the request decides it ({@link Metering}): the gateway evaluates
 * the rules' expressions over its request, which the core cannot see.
 */
@FunctionalInterface
public interface RuleCosts {

    /** Every rule's cost as the rule and the route say ({@link Rule#costOf}). */
    RuleCosts STANDARD = (rule, standard) -> standard;

    /**
     * @param standard the cost the rule and the route say ({@link Rule#costOf})
     */
    int costOf(Rule rule, int standard);
}
