package dev.ratelimiter.gateway.webflux;

import java.util.List;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.IdentityOrigin;
import dev.ratelimiter.gateway.IdentityRequest;
import dev.ratelimiter.gateway.IdentitySource;
import dev.ratelimiter.gateway.IdentitySources;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The caller's identity from the sources {@code ratelimit.identity.*} names ({@link IdentitySources}, shared with the
 * Server MVC flavour), or the API key from a Spring Cloud Gateway {@link KeyResolver}. The principal is waited for
 * only when a source reads it.
 */
public final class ConfiguredIdentityResolver implements RequestIdentityResolver {

    /**
     * What Spring Cloud Gateway's own {@code RequestRateLimiter} puts in place of an empty key, and so what a key
     * resolver written for it may answer for a request without one.
     */
    static final String EMPTY_KEY = "____EMPTY_KEY__";

    private final IdentitySources sources;
    private final KeyResolver keyResolver;
    private final String keyResolverName;

    /**
     * @param apiKey, user, tenant each dimension's sources, in order (the API key's are not asked when a
     * {@code keyResolver} is given)
     * @param tier the trusted tier source, or null to look the tier up by the API key
     * @param keyResolver a Spring Cloud Gateway key resolver that gives the API key, or null
     * @param keyResolverName its bean name, for messages
     */
    public ConfiguredIdentityResolver(List<IdentitySource> apiKey, List<IdentitySource> user,
            List<IdentitySource> tenant, IdentitySource tier, KeyResolver keyResolver, String keyResolverName) {
        this.sources = new IdentitySources(keyResolver != null ? List.of() : apiKey, user, tenant, tier);
        this.keyResolver = keyResolver;
        this.keyResolverName = keyResolverName;
    }

    @Override
    public Mono<CallerIdentity> resolve(ServerWebExchange exchange) {
        IdentityRequest request = new ExchangeIdentityRequest(exchange);
        Mono<CallerIdentity> identified = sources.readsPrincipal()
                ? exchange.getPrincipal().map(principal -> sources.identify(request, principal))
                        .switchIfEmpty(Mono.fromSupplier(() -> sources.identify(request, null)))
                : Mono.fromSupplier(() -> sources.identify(request, null));
        if (keyResolver == null) {
            return identified;
        }
        return identified.flatMap(caller -> keyResolver.resolve(exchange)
                .filter(key -> !EMPTY_KEY.equals(key) && !key.isBlank())
                .map(key -> caller.withApiKey(key, IdentityOrigin.RESOLVER))
                .defaultIfEmpty(caller));
    }

    @Override
    public String describe(Dimension dimension) {
        return dimension == Dimension.API_KEY && keyResolver != null
                ? "the request, as the KeyResolver '" + keyResolverName + "' reads it" : sources.describe(dimension);
    }

    /** Bearer when the key comes with the token; the header's own scheme when it is sent in one (both: both). */
    @Override
    public String challenge() {
        return sources.challenge();
    }
}
