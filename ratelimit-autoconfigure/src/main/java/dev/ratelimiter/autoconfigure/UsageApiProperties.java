package dev.ratelimiter.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The usage API ({@code ratelimit.usage.*}). The operators' {@code GET /v1/usage} is served beside the rules API, on
 * the same port, behind the same accounts (a viewer may read), with no setting of its own; what is set here is the
 * clients' own view, {@code GET /ratelimit/me} on the gateway's port, off unless an operator turns it on.
 */
@ConfigurationProperties("ratelimit.usage")
public class UsageApiProperties {

    private final Me me = new Me();

    public Me getMe() {
        return me;
    }

    /** The caller's own usage on the gateway's port. */
    public static class Me {

        /**
         * Whether GET on the path below answers the calling client's own usage of every rule that applies to it, the
         * client found as the limiter finds it on a request (API key header, identity sources, token claims). The
         * request is not counted against the caller's rules and cannot name another client. Off by default: it tells
         * a client its limits, which an operator may prefer to keep to the RateLimit headers.
         */
        private boolean enabled = false;

        /** Path of the caller's own usage on the gateway's port; it shadows any route to the same path. */
        private String path = "/ratelimit/me";

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getPath() {
            return path;
        }

        public void setPath(String path) {
            this.path = path;
        }
    }
}
