package dev.ratelimiter.autoconfigure.identity;

import java.util.List;

import dev.ratelimiter.autoconfigure.IdentityProperties;
import dev.ratelimiter.autoconfigure.IdentitySourceProperties;
import dev.ratelimiter.autoconfigure.IdentitySourceProperties.Source;
import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.gateway.ClaimSource;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import dev.ratelimiter.gateway.webflux.ConfiguredIdentityResolver;
import dev.ratelimiter.gateway.webflux.HeaderIdentityResolver;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.util.StringUtils;

import static dev.ratelimiter.autoconfigure.identity.IdentityResolvers.PREFIX;
import static dev.ratelimiter.autoconfigure.identity.IdentityResolvers.fromHeaders;
import static dev.ratelimiter.autoconfigure.identity.IdentityResolvers.requestIdentity;
import static dev.ratelimiter.autoconfigure.identity.IdentityResolvers.sources;
import static dev.ratelimiter.autoconfigure.identity.IdentityResolvers.tierSource;

/**
 * The WebFlux flavour's identity resolver from {@code ratelimit.identity.*}: the headers read directly
 * ({@link HeaderIdentityResolver}), or a {@link ConfiguredIdentityResolver} over the sources, or a Spring Cloud
 * Gateway {@code KeyResolver}. Apart from {@link IdentityResolvers} because it names WebFlux types, which the Server
 * MVC flavour's class path does not have.
 */
public final class WebFluxIdentityResolvers {

    private WebFluxIdentityResolvers() {
    }

    public static RequestIdentityResolver of(RateLimitProperties properties, BeanFactory beans,
            ClassLoader classLoader) {
        IdentityProperties identity = properties.getIdentity();
        if (fromHeaders(identity)) {
            return new HeaderIdentityResolver(requestIdentity(properties, AdapterSettings.tierHeader(properties)));
        }
        boolean claims = ClaimSource.available(classLoader);
        IdentitySourceProperties.ApiKey apiKey = identity.getApiKey();
        KeyResolver keyResolver = null;
        if (apiKey.getSource().contains(Source.KEY_RESOLVER)) {
            keyResolver = keyResolver(apiKey, beans);
        }
        return new ConfiguredIdentityResolver(
                keyResolver != null ? List.of()
                        : sources("api-key", apiKey, properties.getApiKey().getHeader(), claims),
                sources("user", identity.getUser(), identity.getUserHeader(), claims),
                sources("tenant", identity.getTenant(), identity.getTenantHeader(), claims),
                tierSource(identity.getTier(), claims), keyResolver, apiKey.getKeyResolver());
    }

    private static KeyResolver keyResolver(IdentitySourceProperties.ApiKey apiKey, BeanFactory beans) {
        String setting = PREFIX + "api-key.source";
        if (apiKey.getSource().size() != 1) {
            throw new InvalidLimitException(setting, setting + " combines key-resolver with other sources; a "
                    + "KeyResolver decides alone (write the fallback into it).");
        }
        String name = apiKey.getKeyResolver();
        if (!StringUtils.hasText(name)) {
            throw new InvalidLimitException(PREFIX + "api-key.key-resolver", setting + " is key-resolver, but "
                    + PREFIX + "api-key.key-resolver does not name the KeyResolver bean.");
        }
        try {
            return beans.getBean(name, KeyResolver.class);
        }
        catch (NoSuchBeanDefinitionException ex) {
            throw new InvalidLimitException(PREFIX + "api-key.key-resolver", PREFIX + "api-key.key-resolver names '"
                    + name + "', but there is no KeyResolver bean of that name.");
        }
    }
}
