package dev.ratelimiter.autoconfigure.mvc;

import dev.ratelimiter.autoconfigure.rules.AbuseScoreOperations;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The abuse scores of the rules API ({@link AbuseScoreOperations}) as WebMvc.fn routes, answered as the rules are
 * ({@link RulesApiServletRoutes}); tried before the rules' own routes, whose {@code /{ruleId}} would take the segment
 * for a rule id.
 */
final class AbuseScoresServletRoutes {

    private AbuseScoresServletRoutes() {
    }

    static RouterFunction<ServerResponse> of(AbuseScoreOperations api) {
        String path = api.mount().path() + AbuseScoreOperations.SEGMENT;
        return RouterFunctions.route()
                .GET(path, request -> RulesApiServletRoutes.write(api.list(RulesApiServletRoutes.caller(request),
                        RulesApiServletRoutes.instance(request))))
                .GET(path + "/{client}", request -> RulesApiServletRoutes.write(api.get(
                        RulesApiServletRoutes.caller(request), request.pathVariable("client"),
                        RulesApiServletRoutes.instance(request))))
                .PUT(path + "/{client}", request -> RulesApiServletRoutes.write(api.put(
                        RulesApiServletRoutes.caller(request), request.pathVariable("client"),
                        request.headers().asHttpHeaders(), () -> RulesApiServletRoutes.body(request),
                        RulesApiServletRoutes.instance(request))))
                .DELETE(path + "/{client}", request -> RulesApiServletRoutes.write(api.delete(
                        RulesApiServletRoutes.caller(request), request.pathVariable("client"),
                        RulesApiServletRoutes.instance(request))))
                .build();
    }
}
