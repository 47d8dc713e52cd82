package dev.ratelimiter.autoconfigure.mvc;

import jakarta.servlet.http.HttpServletRequest;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A filter of the operator paths only ({@link OperatorPaths}): the whole port when it serves nothing else, otherwise
 * the endpoints', the discovery page's and the rules API's paths, so that the gateway's routes never meet it.
 */
abstract class OperatorPathFilter extends OncePerRequestFilter {

    final OperatorPaths paths;

    OperatorPathFilter(OperatorPaths paths) {
        this.paths = paths;
    }

    @Override
    protected final boolean shouldNotFilter(HttpServletRequest request) {
        return !paths.guards(request);
    }
}
