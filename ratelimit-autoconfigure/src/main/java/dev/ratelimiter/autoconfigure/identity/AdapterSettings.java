package dev.ratelimiter.autoconfigure.identity;

import dev.ratelimiter.autoconfigure.ApiKeyProperties;
import dev.ratelimiter.autoconfigure.IdentityProperties;
import dev.ratelimiter.autoconfigure.IdentitySourceProperties;
import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.IdentitySources;
import dev.ratelimiter.gateway.IdentityValuePolicy;
import dev.ratelimiter.gateway.RequestIdentity;
import org.springframework.http.HttpStatusCode;
import org.springframework.util.StringUtils;

/**
 * The settings every gateway flavour's filter is built from, read and checked once here: a mistake fails the start-up
 * naming its setting, on WebFlux and Server MVC alike.
 */
public final class AdapterSettings {

    private AdapterSettings() {
    }

    /** How requests without an API key, or with one nobody listed, are answered. */
    public static ApiKeyRefusals apiKeyRefusals(RateLimitProperties properties) {
        ApiKeyProperties apiKey = properties.getApiKey();
        int unknownStatus = apiKey.getUnknown().getStatus();
        if (unknownStatus != 401 && unknownStatus != 403) {
            throw new InvalidLimitException("ratelimit.api-key.unknown.status", "ratelimit.api-key.unknown.status "
                    + "must be 401 or 403 (a refused credential), but was " + unknownStatus + ".");
        }
        return new ApiKeyRefusals(apiKey.getWhenMissing() == ApiKeyProperties.MissingKeyAction.REJECT,
                HttpStatusCode.valueOf(apiKey.getMissingStatus()), HttpStatusCode.valueOf(unknownStatus));
    }

    /** The format an API key must have before anything is spent on it. */
    public static ApiKeyFormat apiKeyFormat(RateLimitProperties properties) {
        ApiKeyProperties apiKey = properties.getApiKey();
        return new ApiKeyFormat(apiKey.getMinLength(), apiKey.getMaxLength(), apiKey.getPattern());
    }

    /** What user ids must be, and what an unvouched one gets ({@code ratelimit.identity.user.*}). */
    public static IdentityValuePolicy users(RateLimitProperties properties) {
        return valuePolicy("ratelimit.identity.user", properties.getIdentity().getUser());
    }

    /** What tenant ids must be, and what an unvouched one gets ({@code ratelimit.identity.tenant.*}). */
    public static IdentityValuePolicy tenants(RateLimitProperties properties) {
        return valuePolicy("ratelimit.identity.tenant", properties.getIdentity().getTenant());
    }

    private static IdentityValuePolicy valuePolicy(String settings, IdentitySourceProperties.UserOrTenant values) {
        return new IdentityValuePolicy(new ApiKeyFormat(settings, values.getMaxLength(), values.getPattern()),
                values.getUnknown().getPolicy());
    }

    /** Fails the start-up on the removed {@code trusted-proxy-hops}, saying what replaced it. */
    public static void rejectRemovedSettings(RateLimitProperties properties) {
        if (properties.getIdentity().getTrustedProxyHops() != 0) {
            throw new IllegalStateException("ratelimit.identity.trusted-proxy-hops was removed: it believed the "
                    + "X-Forwarded-For entry of any peer, so a client reaching the gateway directly chose its own "
                    + "address. List the addresses of your proxies instead, e.g. ratelimit.identity.trusted-proxies: "
                    + "[10.0.0.0/8]; their entries are then believed, and nobody else's.");
        }
    }

    /**
     * The identity sources {@code ratelimit.identity.*} names beyond the headers (principal, claim, expression, a
     * trusted tier claim), checked as on WebFlux (the same messages), for a flavour without Spring Cloud Gateway's
     * {@code KeyResolver}, which must refuse {@code key-resolver} itself before asking; null when every value comes
     * from a header, which that flavour then reads with {@link #headerIdentity} alone.
     *
     * @param classLoader where Spring Security's OAuth2 classes are looked for (claims need them)
     */
    public static IdentitySources identitySources(RateLimitProperties properties, ClassLoader classLoader) {
        return IdentityResolvers.sources(properties, classLoader);
    }

    /** The trusted tier header {@code ratelimit.identity.tier.header} names, or null. */
    public static String tierHeader(RateLimitProperties properties) {
        String tierHeader = properties.getIdentity().getTier().getHeader();
        return StringUtils.hasText(tierHeader) ? tierHeader : null;
    }

    /**
     * The header identity and client address the properties describe.
     *
     * @param tierHeader the trusted tier header, or null to look the tier up by the API key
     */
    public static RequestIdentity headerIdentity(RateLimitProperties properties, String tierHeader) {
        IdentityProperties identity = properties.getIdentity();
        return new RequestIdentity(properties.getApiKey().getHeader(), identity.getUserHeader(),
                identity.getTenantHeader(), tierHeader, new ClientAddressResolver(identity.getTrustedProxies(),
                        identity.getForwardedHeader(), identity.getIpv4Prefix(), identity.getIpv6Prefix()));
    }
}
