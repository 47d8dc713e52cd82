package dev.ratelimiter.mvc;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.RequestIdentity;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * The header identity as a {@link ServletIdentityResolver}: the limiter recognises it and reads the headers itself,
 * without a {@link CallerIdentity} per request (the hot path of a configuration that reads headers only).
 */
record HeaderIdentity(RequestIdentity identity) implements ServletIdentityResolver {

    @Override
    public CallerIdentity resolve(ServerRequest request, String routeId) {
        return identity.caller(request.headers().asHttpHeaders());
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
