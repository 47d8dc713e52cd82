package dev.ratelimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Authentication of the actuator endpoints ({@code ratelimit.management.security.*}): who may read them and who may
 * change limits through them. HTTP Basic, two accounts: an administrator (every operation, writes included) and an
 * optional viewer (read operations only).
 */
@ConfigurationProperties("ratelimit.management.security")
public class OperatorSecurityProperties {

    /**
     * Whether the actuator endpoints require authentication. Unset (the default): required wherever they are served
     * on an address other than loopback, that is unless {@code management.server.address} (with a management port of
     * its own) or {@code server.address} (without one) is a loopback address. true: always; false: never (the writes
     * are then open to anything that can reach the port - only for a port nothing else can reach).
     */
    private @Nullable Boolean enabled;

    /** The account that may do everything, writes included (role RATELIMIT_ADMIN). */
    private final Account admin = Account.named("ratelimit-admin");

    /** An account that may only read (role RATELIMIT_VIEWER); no password, no viewer account. */
    private final Account viewer = Account.named("ratelimit-viewer");

    /**
     * Endpoints whose read operations need no authentication: health (the kubelet's probes carry no credentials;
     * details stay hidden unless management.endpoint.health.show-details allows them) and prometheus (scrapers).
     */
    private List<String> publicEndpoints = new ArrayList<>(List.of("health", "prometheus"));

    /**
     * Endpoints whose read operations the viewer may use (the admin may use all). Not env, configprops, heapdump,
     * threaddump or the gateway's routes: those can show secrets, among them the admin's password.
     */
    private List<String> viewerEndpoints = new ArrayList<>(List.of("ratelimit", "health", "info", "metrics",
            "prometheus"));

    public @Nullable Boolean getEnabled() {
        return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
        this.enabled = enabled;
    }

    public List<String> getViewerEndpoints() {
        return viewerEndpoints;
    }

    public void setViewerEndpoints(List<String> viewerEndpoints) {
        this.viewerEndpoints = viewerEndpoints;
    }

    public Account getAdmin() {
        return admin;
    }

    public Account getViewer() {
        return viewer;
    }

    public List<String> getPublicEndpoints() {
        return publicEndpoints;
    }

    public void setPublicEndpoints(List<String> publicEndpoints) {
        this.publicEndpoints = publicEndpoints;
    }

    /** One HTTP Basic account. */
    public static class Account {

        /** User name. */
        private String username;

        /**
         * Password: a bcrypt hash as {bcrypt}$2y$10$... (recommended), another of Spring Security's {id} encodings,
         * or plain text ({noop}..., or without an {id}: at least 12 characters). Give it from a secret (an
         * environment variable such as RATELIMIT_MANAGEMENT_SECURITY_ADMIN_PASSWORD). Without one, the admin account
         * gets a random password, logged once at start-up; the viewer account does not exist.
         */
        private @Nullable String password;

        /**
         * An account of this default user name. A factory, not a constructor: the configuration processor reads a
         * class's only constructor with arguments as constructor binding and would list no property but username.
         */
        static Account named(String username) {
            Account account = new Account();
            account.setUsername(username);
            return account;
        }

        public String getUsername() {
            return username;
        }

        public void setUsername(String username) {
            this.username = username;
        }

        public @Nullable String getPassword() {
            return password;
        }

        public void setPassword(@Nullable String password) {
            this.password = password;
        }
    }
}
