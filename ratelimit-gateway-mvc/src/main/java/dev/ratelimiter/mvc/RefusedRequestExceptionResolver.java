package dev.ratelimiter.mvc;

import java.io.IOException;

import dev.ratelimiter.gateway.RefusalRenderer;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers a request the limiter refused with its refusal, whatever exception the handling of it ended with. The
 * router function answers a refusal thrown out of the matched handler on its own thread; this covers the ones it
 * cannot see: a route that names itself in asynchronous work ({@code ServerResponse.async} around a gateway route,
 * whose refusal fails the async result on another thread), and a filter that wraps the refusal in an exception of its
 * own. Without it those would be the servlet's 500, for a request the limiter answered.
 */
public final class RefusedRequestExceptionResolver implements HandlerExceptionResolver, Ordered {

    private static final Logger logger = LoggerFactory.getLogger(RefusedRequestExceptionResolver.class);

    @Override
    public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
            Exception ex) {
        if (!(request.getAttribute(LimitedRequest.ATTRIBUTE) instanceof LimitedRequest limited)) {
            return null;
        }
        RefusalRenderer.Rendered refusal = limited.refusal();
        if (refusal == null || response.isCommitted()) {
            return null;
        }
        try {
            RefusalResponses.write(refusal, response);
        }
        catch (IOException | IllegalStateException writeFailed) {
            logger.debug("Could not write the limiter's refusal", writeFailed);
        }
        // an empty view: handled, nothing left to render
        return new ModelAndView();
    }

    /** Before Spring's own resolvers (which would answer a 500), after none that answers on its own. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE + 1;
    }
}
