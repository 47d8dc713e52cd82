package dev.ratelimiter.autoconfigure;

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
}
