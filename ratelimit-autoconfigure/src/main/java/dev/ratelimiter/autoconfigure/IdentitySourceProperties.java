package dev.ratelimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.core.UnknownValuePolicy;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Where one dimension of the caller's identity is read, bound from {@code ratelimit.identity.api-key.*},
 * {@code ratelimit.identity.user.*} or {@code ratelimit.identity.tenant.*}.
 */
public class IdentitySourceProperties {

    /**
     * Where the value is read, in order: the first that has one gives it (e.g. claim,header: the token's claim, else
     * the header for callers without a token; a value from the token is counted apart from the header's and listed
     * with its source's prefix: claim:, principal: or expression:). header: the dimension's header
     * (ratelimit.api-key.header, ratelimit.identity.user-header or ratelimit.identity.tenant-header); principal: the
     * authenticated principal's name (a JWT's sub); claim: a claim of the caller's token (needs Spring Security's
     * OAuth2 resource server); expression: a SpEL expression over the request; key-resolver (API key only, alone): a
     * Spring Cloud Gateway KeyResolver bean.
     */
    private List<Source> source = new ArrayList<>(List.of(Source.HEADER));

    /**
     * Claim of the caller's token read by the claim source. Default: azp (the client the token was issued to) for
     * the API key, sub for the user, tenant_id for the tenant.
     */
    private String claim;

    /**
     * SpEL expression read by the expression source, e.g. claims['client_id'] ?: headers['X-Client'] (the claim
     * first, so a token holder cannot pick its value by header). It sees headers, cookies, query (maps of first
     * values), path, method, route (the route id), principal (its name) and claims, and may combine them with
     * operators only: method calls, types, beans, variables and assignments fail the start-up, as does an expression
     * that does not parse. One that fails on a request gives no value. A value whose evaluation read only claims and
     * principal is the token's; one that read the request counts as the client's, like a header.
     */
    private String expression;


    public List<Source> getSource() {
        return source;
    }

    public void setSource(List<Source> source) {
        this.source = source;
    }

    public String getClaim() {
        return claim;
    }

    public void setClaim(String claim) {
        this.claim = claim;
    }

    public String getExpression() {
        return expression;
    }

    public void setExpression(String expression) {
        this.expression = expression;
    }

    /** Where a dimension's value is read. */
    public enum Source {
        /** The dimension's request header. */
        HEADER,
        /** The authenticated principal's name. */
        PRINCIPAL,
        /** A claim of the caller's token. */
        CLAIM,
        /** A SpEL expression over the request. */
        EXPRESSION,
        /** A Spring Cloud Gateway KeyResolver bean (the API key only). */
        KEY_RESOLVER
    }

    /**
     * The user's or tenant's sources, with the checks the API key has: the length and format every value must have,
     * and what becomes of one nobody vouched for.
     */
    public static class UserOrTenant extends IdentitySourceProperties {

        /**
         * Most characters a value may have; a longer one is refused with 400 invalid_identity before any rule or
         * store is asked (when a rule reads the value). 0: no limit but the server's header size.
         */
        private int maxLength;

        /**
         * A regular expression every value must match as a whole (e.g. [A-Za-z0-9_-]{1,64}), checked after the
         * length; a value that does not is refused with 400 invalid_identity. Empty: none.
         */
        private String pattern;

        /** Values nobody vouched for: stated by the client where the sources also read the token. */
        @NestedConfigurationProperty
        private final Unknown unknown = new Unknown();

        /** Sources read from the claim of this name by default (a factory: a constructor would read as binding). */
        static UserOrTenant readingClaim(String claim) {
            UserOrTenant properties = new UserOrTenant();
            properties.setClaim(claim);
            return properties;
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

        public Unknown getUnknown() {
            return unknown;
        }
    }

    /**
     * What becomes of a user or tenant id nobody vouched for: one a header (or an expression over the request) gave
     * where the source list also reads the token (claim, principal, an expression over the claims), so a caller
     * whose token did not say. A header-only list is the authentication's and is trusted as it sets it.
     */
    public static class Unknown {

        /**
         * per-address: counted as the client's address (every such value from one address shares one bucket of each
         * per-user or per-tenant cap, so rotating values buys nothing); reject: refused with 403 unknown_identity;
         * accept: counted as given.
         */
        private UnknownValuePolicy policy = UnknownValuePolicy.PER_ADDRESS;

        public UnknownValuePolicy getPolicy() {
            return policy;
        }

        public void setPolicy(UnknownValuePolicy policy) {
            this.policy = policy;
        }
    }

    /** The API key's sources, and the key resolver bean one of them may name. */
    public static class ApiKey extends IdentitySourceProperties {

        /**
         * Name of the Spring Cloud Gateway KeyResolver bean that gives the API key, for the key-resolver source (which
         * is then the only one): an empty answer is a request without a key. WebFlux only: Gateway Server MVC refuses
         * key-resolver (use an expression or a ServletIdentityResolver bean there).
         */
        private String keyResolver;

        public ApiKey() {
            setClaim("azp");
        }

        public String getKeyResolver() {
            return keyResolver;
        }

        public void setKeyResolver(String keyResolver) {
            this.keyResolver = keyResolver;
        }
    }

    /**
     * Where the tier is read, when not looked up by the API key ({@code ratelimit.identity.tier.*}). Only a trusted
     * source will do: a claim of a verified token, or a header the authentication in front sets and strips from
     * clients. A caller without a value, or with a tier nobody configured, gets its API key's tier.
     */
    public static class Tier {

        /** Claim of the caller's token that names its tier, e.g. plan. Empty: the tier is not read from a claim. */
        private String claim;

        /**
         * Header that names the caller's tier, set by the authentication in front of the limiter, which must strip
         * client-sent copies: whoever can send it chooses its own limits. Sent twice, it is not believed. Empty: the
         * tier is not read from a header.
         */
        private String header;

        public String getClaim() {
            return claim;
        }

        public void setClaim(String claim) {
            this.claim = claim;
        }

        public String getHeader() {
            return header;
        }

        public void setHeader(String header) {
            this.header = header;
        }
    }
}
