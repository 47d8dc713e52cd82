package dev.ratelimiter.mvc;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.IdentitySources;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * The sources {@code ratelimit.identity.*} names, read from the servlet request: the same sources, checks and
 * expression root as on WebFlux ({@link IdentitySources}). The principal is the request's user principal, which Spring
 * Security's servlet filters set to the caller's {@code Authentication} (an anonymous one reads as nobody); it is
 * asked only when a source reads it.
 */
record ConfiguredServletIdentity(IdentitySources sources) implements ServletIdentityResolver {

    @Override
    public CallerIdentity resolve(ServerRequest request, String routeId) {
        return sources.identify(new ServletIdentityRequest(request, routeId),
                sources.readsPrincipal() ? request.servletRequest().getUserPrincipal() : null);
    }

    @Override
    public String describe(Dimension dimension) {
        return sources.describe(dimension);
    }

    @Override
    public String challenge() {
        return sources.challenge();
    }
}
