package dev.ratelimiter.autoconfigure;

import java.util.LinkedHashSet;
import java.util.Set;

import dev.ratelimiter.autoconfigure.metrics.RuleTags;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The limiter's meters ({@code ratelimit.metrics.*}): how many values their {@code rule} tag may take. Each value is
 * a time series per outcome, route class and tier in the monitoring system, and runtime rules (one per customer
 * override, posted through the rules API) can number in the thousands.
 */
@ConfigurationProperties("ratelimit.metrics")
public class RateLimitMetricsProperties {

    private final RuleTag ruleTag = new RuleTag();

    public RuleTag getRuleTag() {
        return ruleTag;
    }

    /** What the {@code rule} tag of ratelimit.decisions, ratelimit.near.limit and ratelimit.shadow.denials says. */
    public static class RuleTag {

        /**
         * Tag of a configured rule (application.yml, a tier's limits, or a runtime rule replacing one): its id, or
         * its group. Configured rules are as many as the configuration file has.
         */
        private RuleTags.By configuredRules = RuleTags.By.ID;

        /**
         * Tag of a runtime rule (posted through the rules API or the rule endpoint): its group when a configured rule
         * competes in that group (an override in tier-default), else 'runtime'; or its id, one series per rule posted,
         * without bound.
         */
        private RuleTags.By runtimeRules = RuleTags.By.GROUP;

        /**
         * Rule ids tagged by their own id whatever the above says: a few runtime rules worth a series of their own
         * (a large customer's override).
         */
        private Set<String> keepIds = new LinkedHashSet<>();

        public RuleTags.By getConfiguredRules() {
            return configuredRules;
        }

        public void setConfiguredRules(RuleTags.By configuredRules) {
            this.configuredRules = configuredRules;
        }

        public RuleTags.By getRuntimeRules() {
            return runtimeRules;
        }

        public void setRuntimeRules(RuleTags.By runtimeRules) {
            this.runtimeRules = runtimeRules;
        }

        public Set<String> getKeepIds() {
            return keepIds;
        }

        public void setKeepIds(Set<String> keepIds) {
            this.keepIds = keepIds;
        }
    }
}
