package dev.ratelimiter.autoconfigure.identity;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.autoconfigure.IdentityProperties;
import dev.ratelimiter.autoconfigure.IdentitySourceProperties;
import dev.ratelimiter.autoconfigure.IdentitySourceProperties.Source;
import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.gateway.ClaimSource;
import dev.ratelimiter.gateway.ExpressionSource;
import dev.ratelimiter.gateway.IdentitySource;
import dev.ratelimiter.gateway.IdentitySources;
import dev.ratelimiter.gateway.RequestIdentity;
import org.springframework.util.StringUtils;

/**
 * The identity {@code ratelimit.identity.*} describes, checked as it is built: every mistake fails the start-up naming
 * its setting. Headers only (the default) give the {@link RequestIdentity} each flavour reads directly; any other
 * source gives the {@link IdentitySources} both flavours read ({@link #sources(RateLimitProperties, ClassLoader)}).
 * Web-neutral, so that the Server MVC flavour can load it: the WebFlux resolver is {@link WebFluxIdentityResolvers}'.
 */
public final class IdentityResolvers {

    static final String PREFIX = "ratelimit.identity.";

    private IdentityResolvers() {
    }

    /**
     * The sources the properties name, for a flavour without Spring Cloud Gateway's {@code KeyResolver} (which it
     * refuses itself, naming its own alternative), or null when every value comes from a header: that flavour then
     * reads the headers directly.
     */
    public static IdentitySources sources(RateLimitProperties properties, ClassLoader classLoader) {
        IdentityProperties identity = properties.getIdentity();
        if (fromHeaders(identity)) {
            return null;
        }
        boolean claims = ClaimSource.available(classLoader);
        return new IdentitySources(
                sources("api-key", identity.getApiKey(), properties.getApiKey().getHeader(), claims),
                sources("user", identity.getUser(), identity.getUserHeader(), claims),
                sources("tenant", identity.getTenant(), identity.getTenantHeader(), claims),
                tierSource(identity.getTier(), claims));
    }

    /** Whether every value, the trusted tier included, comes from a header; refuses a tier with two sources. */
    static boolean fromHeaders(IdentityProperties identity) {
        IdentitySourceProperties.Tier tier = identity.getTier();
        if (StringUtils.hasText(tier.getClaim()) && StringUtils.hasText(tier.getHeader())) {
            throw new InvalidLimitException(PREFIX + "tier", PREFIX + "tier.claim and " + PREFIX + "tier.header are "
                    + "both set; the tier has one trusted source. Set one of them.");
        }
        return headersOnly(identity) && !StringUtils.hasText(tier.getClaim());
    }

    static IdentitySource tierSource(IdentitySourceProperties.Tier tier, boolean claims) {
        if (StringUtils.hasText(tier.getClaim())) {
            requireClaims(claims, PREFIX + "tier.claim");
            return new ClaimSource(tier.getClaim());
        }
        return StringUtils.hasText(tier.getHeader()) ? IdentitySource.header(tier.getHeader()) : null;
    }

    /** The header identity and client address the properties describe (the filter reads the address with it). */
    static RequestIdentity requestIdentity(RateLimitProperties properties, String tierHeader) {
        return AdapterSettings.headerIdentity(properties, tierHeader);
    }

    static boolean headersOnly(IdentityProperties identity) {
        return List.of(Source.HEADER).equals(identity.getApiKey().getSource())
                && List.of(Source.HEADER).equals(identity.getUser().getSource())
                && List.of(Source.HEADER).equals(identity.getTenant().getSource());
    }

    static List<IdentitySource> sources(String dimension, IdentitySourceProperties configured, String header,
            boolean claims) {
        String setting = PREFIX + dimension + ".source";
        if (configured.getSource() == null || configured.getSource().isEmpty()) {
            throw new InvalidLimitException(setting, setting + " is empty; name at least one source (header, "
                    + "principal, claim, expression).");
        }
        List<IdentitySource> sources = new ArrayList<>();
        for (Source source : configured.getSource()) {
            sources.add(switch (source) {
                case HEADER -> IdentitySource.header(header);
                case PRINCIPAL -> IdentitySource.principal();
                case CLAIM -> {
                    requireClaims(claims, setting);
                    if (!StringUtils.hasText(configured.getClaim())) {
                        throw new InvalidLimitException(setting, setting + " reads a claim, but " + PREFIX + dimension
                                + ".claim is empty.");
                    }
                    yield new ClaimSource(configured.getClaim());
                }
                case EXPRESSION -> {
                    String expressionSetting = PREFIX + dimension + ".expression";
                    if (!StringUtils.hasText(configured.getExpression())) {
                        throw new InvalidLimitException(expressionSetting, setting + " reads an expression, but "
                                + expressionSetting + " is empty.");
                    }
                    yield new ExpressionSource(expressionSetting, configured.getExpression(), claims);
                }
                // the API key's key resolver is taken before its sources are built
                case KEY_RESOLVER -> throw new InvalidLimitException(setting, setting + " names key-resolver, which "
                        + "gives API keys only, and alone: " + PREFIX + "api-key.source: key-resolver.");
            });
        }
        return sources;
    }

    private static void requireClaims(boolean claims, String setting) {
        if (!claims) {
            throw new InvalidLimitException(setting, setting + " reads a claim of the caller's token, but Spring "
                    + "Security's OAuth2 resource server (spring-security-oauth2-resource-server and "
                    + "spring-security-oauth2-jose) is not on the classpath. Add it, or read the value elsewhere.");
        }
    }
}
