package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.UnknownApiKeyPolicy;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * How clients identify themselves by API key, bound from {@code ratelimit.api-key.*}: the header, what a request
 * without one gets, the shape every key must have, and what becomes of keys nobody listed.
 */
public class ApiKeyProperties {

    /**
     * Request header carrying the client's API key.
     */
    private String header = "X-API-Key";

    /**
     * What to do with a request that has no API key: reject it, or evaluate it by the rules that need no key.
     */
    private MissingKeyAction whenMissing = MissingKeyAction.REJECT;

    /**
     * HTTP status of the answer to a request without an API key, when rejecting.
     */
    private int missingStatus = 401;

    /**
     * Fewest characters an API key may have; a shorter one is refused with 400 before any rule or store is asked, so
     * that no key short enough to be guessed ever names a tier. 0 or 1: no minimum.
     */
    private int minLength = 8;

    /**
     * Most characters an API key may have; a longer one is refused with 400 before any rule or store is asked. 0:
     * no limit but the server's header size.
     */
    private int maxLength = 256;

    /**
     * A regular expression every API key must match as a whole; a key that does not is refused with 400 before any
     * rule or store is asked, so junk and rotating keys cost nothing. By default the characters of URL-safe and
     * standard base64 and of URLs' unreserved set (letters, digits, '-', '_', '.', '~', '+', '/', '='). Empty: none.
     */
    private String pattern = "[A-Za-z0-9._~+/=-]+";

    /** API keys that no tier lists and no customer override names. */
    @NestedConfigurationProperty
    private final Unknown unknown = new Unknown();

    public Unknown getUnknown() {
        return unknown;
    }

    public int getMinLength() {
        return minLength;
    }

    public void setMinLength(int minLength) {
        this.minLength = minLength;
    }

    public int getMaxLength() {
        return maxLength;
    }

    public void setMaxLength(int maxLength) {
        this.maxLength = maxLength;
    }

    public String getPattern() {
        return pattern;
    }

    public void setPattern(String pattern) {
        this.pattern = pattern;
    }

    public String getHeader() {
        return header;
    }

    public void setHeader(String header) {
        this.header = header;
    }

    public MissingKeyAction getWhenMissing() {
        return whenMissing;
    }

    public void setWhenMissing(MissingKeyAction whenMissing) {
        this.whenMissing = whenMissing;
    }

    public int getMissingStatus() {
        return missingStatus;
    }

    public void setMissingStatus(int missingStatus) {
        this.missingStatus = missingStatus;
    }

    /** What to do with a request that has no API key. */
    public enum MissingKeyAction {
        /** Answer with {@code missing-status} and a problem body; the upstream never sees the request. */
        REJECT,
        /** Evaluate it without a key: only rules that need none (per-IP, per-route caps) apply. */
        ALLOW
    }

    /** What happens to API keys nobody listed ({@code ratelimit.api-key.unknown}). */
    public static class Unknown {

        /**
         * per-address: limited by one small bucket per client address ({@code limit}) and by nothing else, so
         * rotating keys buys nothing and creates no state per key; reject: refused with {@code status} before any
         * rule or store is asked; default-tier: a client of the default tier like any other (only where the keys are
         * checked in front of the gateway: any made-up key gets a fresh default-tier bucket).
         */
        private UnknownApiKeyPolicy policy = UnknownApiKeyPolicy.PER_ADDRESS;

        /** Status of the refusal under the reject policy (401 or 403). */
        private int status = 401;

        /**
         * The per-address bucket under the per-address policy (a token bucket or sliding window, keyed by the client
         * address as ratelimit.identity resolves it). Default: a burst of 10, refilled at 1 per second.
         */
        @NestedConfigurationProperty
        private final LimitProperties limit = defaultUnknownLimit();

        private static LimitProperties defaultUnknownLimit() {
            LimitProperties limit = new LimitProperties();
            limit.setCapacity(10);
            limit.setRefillTokens(1);
            limit.setRefillPeriod(java.time.Duration.ofSeconds(1));
            return limit;
        }

        public UnknownApiKeyPolicy getPolicy() {
            return policy;
        }

        public void setPolicy(UnknownApiKeyPolicy policy) {
            this.policy = policy;
        }

        public int getStatus() {
            return status;
        }

        public void setStatus(int status) {
            this.status = status;
        }

        public LimitProperties getLimit() {
            return limit;
        }
    }
}
