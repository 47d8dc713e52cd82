package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import dev.ratelimiter.autoconfigure.rules.RulesApiMount;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The REST rules API ({@code ratelimit.rules-api.*}): {@code PUT/GET/DELETE <path>/{ruleId}} and {@code GET <path>}
 * with nested rule documents, versions as ETags and If-Match, served with the actuator and protected like its
 * writes. See {@link RulesApiMount} for where it is served.
 */
@ConfigurationProperties("ratelimit.rules-api")
public class RulesApiProperties {

    /**
     * Whether the rules API is served. Unset (the default): only on a management port of its own
     * (management.server.port), never on the application's port, where the gateway's clients are. true: also on the
     * application's port when management shares it, under the actuator's base path
     * (management.endpoints.web.base-path, so /actuator/v1/rules), where no gateway route is shadowed. false: never.
     */
    private @Nullable Boolean enabled;

    /**
     * Path of the rule collection, relative to the management port's base path (or to the actuator's base path when
     * served on the application's port). The rules are at path/{ruleId}, the OpenAPI document at
     * path/_openapi.yaml.
     */
    private String path = "/v1/rules";

    /** The what-if replay, POST path/{ruleId}/what-if: a proposed rule against recorded decision events. */
    private final WhatIf whatIf = new WhatIf();

    public @Nullable Boolean getEnabled() {
        return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
        this.enabled = enabled;
    }

    public String getPath() {
        return path;
    }

    public void setPath(String path) {
        this.path = path;
    }

    public WhatIf getWhatIf() {
        return whatIf;
    }

    /** Bounds on a what-if replay: each reads the decision-event topic and replays it in this JVM. */
    public static class WhatIf {

        /** Longest time range one replay may cover. */
        private Duration maxRange = Duration.ofDays(7);

        /** Most decision events one replay may read; a range holding more is refused before any is read. */
        private long maxEvents = 500_000;

        /** How long one replay may wait for Kafka, reading included; past it the replay answers 503. */
        private Duration timeout = Duration.ofSeconds(30);

        /** Replays that may run at once on this instance; one more is answered 429. */
        private int maxConcurrent = 1;

        /** Most client-hour rows in a report (the most refused first); the totals count every row. */
        private int maxRows = 1_000;

        public Duration getMaxRange() {
            return maxRange;
        }

        public void setMaxRange(Duration maxRange) {
            this.maxRange = maxRange;
        }

        public long getMaxEvents() {
            return maxEvents;
        }

        public void setMaxEvents(long maxEvents) {
            this.maxEvents = maxEvents;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public int getMaxConcurrent() {
            return maxConcurrent;
        }

        public void setMaxConcurrent(int maxConcurrent) {
            this.maxConcurrent = maxConcurrent;
        }

        public int getMaxRows() {
            return maxRows;
        }

        public void setMaxRows(int maxRows) {
            this.maxRows = maxRows;
        }
    }
}
