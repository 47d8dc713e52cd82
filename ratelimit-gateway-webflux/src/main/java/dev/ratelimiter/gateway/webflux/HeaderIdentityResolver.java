package dev.ratelimiter.gateway.webflux;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The limiter's own header identity as a WebFlux {@link RequestIdentityResolver}. The filter recognises it and reads
 * the headers directly, without subscribing to the {@link Mono}: the hot path of a headers-only configuration.
 */
public record HeaderIdentityResolver(RequestIdentity identity) implements RequestIdentityResolver {

    @Override
    public Mono<CallerIdentity> resolve(ServerWebExchange exchange) {
        return Mono.just(identity.caller(exchange.getRequest().getHeaders()));
    }

    @Override
    public String describe(Dimension dimension) {
        return identity.describe(dimension);
    }

    @Override
    public String challenge() {
        return identity.challenge();
    }
}
