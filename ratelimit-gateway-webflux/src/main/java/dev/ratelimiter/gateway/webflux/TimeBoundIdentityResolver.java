package dev.ratelimiter.gateway.webflux;

import java.time.Duration;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import dev.ratelimiter.gateway.WarnOnce;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * A resolver answering through a {@link Mono} (the principal, a claim, an expression, a {@code KeyResolver}, an
 * application's own), given at most {@code timeout} per request. One that never answers — a {@code KeyResolver}
 * calling a service that hangs — would otherwise hold every request it sees, the kill switch's too; past the timeout
 * the request is decided as one without identity, as an error or an empty answer is.
 */
public final class TimeBoundIdentityResolver implements RequestIdentityResolver {

    private static final Logger logger = LoggerFactory.getLogger(TimeBoundIdentityResolver.class);

    private final RequestIdentityResolver resolver;
    private final Duration timeout;
    private final WarnOnce late = new WarnOnce(logger);
    // Prebuilt: under a resolver that hangs for everyone, a timeout per request must not cost an exception each.
    private final Mono<CallerIdentity> withoutIdentity = Mono.fromSupplier(() -> {
        late.warn("The identity resolver did not answer within {}; deciding the request as one without identity",
                TimeBoundIdentityResolver.this.timeout);
        return CallerIdentity.NONE;
    });

    private TimeBoundIdentityResolver(RequestIdentityResolver resolver, Duration timeout) {
        this.resolver = resolver;
        this.timeout = timeout;
    }

    /** {@code resolver} bounded by {@code timeout}; the header resolver, which answers at once, as it is. */
    public static RequestIdentityResolver bound(RequestIdentityResolver resolver, Duration timeout) {
        if (resolver instanceof HeaderIdentityResolver) {
            return resolver;
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("ratelimit.identity.resolve-timeout must be positive, but was " + timeout
                    + ".");
        }
        return new TimeBoundIdentityResolver(resolver, timeout);
    }

    @Override
    public Mono<CallerIdentity> resolve(ServerWebExchange exchange) {
        return Mono.defer(() -> resolver.resolve(exchange)).timeout(timeout, withoutIdentity);
    }

    @Override
    public String describe(Dimension dimension) {
        return resolver.describe(dimension);
    }

    @Override
    public String challenge() {
        return resolver.challenge();
    }
}
