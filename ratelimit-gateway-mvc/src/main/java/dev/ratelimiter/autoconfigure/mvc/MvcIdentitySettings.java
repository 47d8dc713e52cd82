package dev.ratelimiter.autoconfigure.mvc;

import dev.ratelimiter.autoconfigure.IdentitySourceProperties.Source;
import dev.ratelimiter.autoconfigure.IdentitySourceProperties;
import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.autoconfigure.identity.AdapterSettings;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.gateway.IdentitySources;
import dev.ratelimiter.mvc.ServletIdentityResolver;

/**
 * The Server MVC flavour's identity from {@code ratelimit.identity.*}: the same sources, checks and messages as on
 * WebFlux, except {@code key-resolver}, which names a Spring Cloud Gateway WebFlux {@code KeyResolver} (a
 * {@code Mono} over a {@code ServerWebExchange}) that no servlet request can be handed: it fails the start-up naming
 * what replaces it here.
 */
final class MvcIdentitySettings {

    private MvcIdentitySettings() {
    }

    static ServletIdentityResolver resolver(RateLimitProperties properties, ClassLoader classLoader) {
        refuseKeyResolver("api-key", properties.getIdentity().getApiKey());
        refuseKeyResolver("user", properties.getIdentity().getUser());
        refuseKeyResolver("tenant", properties.getIdentity().getTenant());
        IdentitySources sources = AdapterSettings.identitySources(properties, classLoader);
        return sources != null ? ServletIdentityResolver.of(sources) : ServletIdentityResolver
                .fromHeaders(AdapterSettings.headerIdentity(properties, AdapterSettings.tierHeader(properties)));
    }

    private static void refuseKeyResolver(String dimension, IdentitySourceProperties configured) {
        if (configured.getSource() != null && configured.getSource().contains(Source.KEY_RESOLVER)) {
            String setting = "ratelimit.identity." + dimension + ".source";
            throw new InvalidLimitException(setting, setting + " names key-resolver, a Spring Cloud Gateway WebFlux "
                    + "KeyResolver, which the Gateway Server MVC flavour cannot call. Read the value with an "
                    + "expression (" + setting + ": expression, ratelimit.identity." + dimension + ".expression), or "
                    + "declare a " + ServletIdentityResolver.class.getName() + " bean.");
        }
    }
}
