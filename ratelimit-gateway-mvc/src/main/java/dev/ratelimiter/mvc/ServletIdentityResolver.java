package dev.ratelimiter.mvc;

import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.IdentityDescriber;
import dev.ratelimiter.gateway.IdentitySources;
import dev.ratelimiter.gateway.RequestIdentity;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * Who is calling, on the Server MVC flavour: the API key, user and tenant the rules key on, and the tier when a trusted
 * source says it. Declare a bean of this type to replace the one configured from {@code ratelimit.identity.*} (the
 * MVC counterpart of the WebFlux {@code RequestIdentityResolver}, and of a Spring Cloud Gateway {@code KeyResolver}).
 *
 * <p>It is asked synchronously on the servlet thread, once per limited request, after the servlet filters (Spring
 * Security's among them, so the request's user principal is the authenticated caller) and before the route's own
 * filters. Its time adds to the request's, outside the store timeout: read what the request carries, never call out.
 * An exception or a null answer is a request without identity (a rule that needs a value it lacks then shares one
 * bucket or refuses it with 400, as its {@code when-missing} says), never a 5xx. Its
 * {@linkplain IdentityDescriber descriptions} name the sources in the answers.
 */
@FunctionalInterface
public interface ServletIdentityResolver extends IdentityDescriber {

    /**
     * The caller of this request; values it lacks are null.
     *
     * @param routeId the id of the gateway route that took the request
     */
    CallerIdentity resolve(ServerRequest request, String routeId);

    /** The identity from the request headers alone: the limiter then reads them directly, as it always did. */
    static ServletIdentityResolver fromHeaders(RequestIdentity identity) {
        return new HeaderIdentity(identity);
    }

    /** The identity from the sources {@code ratelimit.identity.*} names, read from the servlet request. */
    static ServletIdentityResolver of(IdentitySources sources) {
        return new ConfiguredServletIdentity(sources);
    }
}
