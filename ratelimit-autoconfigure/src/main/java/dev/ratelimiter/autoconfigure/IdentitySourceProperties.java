package dev.ratelimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;

/**
 * Where one dimension of the caller's identity is read, bound from {@code ratelimit.identity.api-key.*},
 * {@code ratelimit.identity.user.*} or {@code ratelimit.identity.tenant.*}.
 */
public class IdentitySourceProperties {

    /**
     * Where the value is read, in order: the first that has one gives it (e.g. claim,header: the token's claim, else
     * the header for callers without a token). header: the dimension's header (ratelimit.api-key.header,
     * ratelimit.identity.user-header or ratelimit.identity.tenant-header); principal: the authenticated principal's
     * name (a JWT's sub); claim: a claim of the caller's token (needs Spring Security's OAuth2 resource server);
     * expression: a SpEL expression over the request; key-resolver (API key only, alone): a Spring Cloud Gateway
     * KeyResolver bean.
     */
    private List<Source> source = new ArrayList<>(List.of(Source.HEADER));

    /**
     * Claim of the caller's token read by the claim source. Default: azp (the client the token was issued to) for
     * the API key, sub for the user, tenant_id for the tenant.
     */
    private String claim;

    /**
     * SpEL expression read by the expression source, e.g. headers['X-Client'] ?: claims['client_id']. It sees
     * headers, cookies, query (maps of first values), path, method, route (the route id), principal (its name) and
     * claims, and may combine them with operators only: method calls, types, beans, variables and assignments fail
     * the start-up, as does an expression that does not parse. One that fails on a request gives no value.
     */
    private String expression;

    /** Sources read from the claim of this name by default. */
    static IdentitySourceProperties readingClaim(String claim) {
        IdentitySourceProperties properties = new IdentitySourceProperties();
        properties.setClaim(claim);
        return properties;
    }

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
