package dev.ratelimiter.autoconfigure.mvc;

import java.security.Principal;

import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.autoconfigure.rules.WhatIfOperations;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The rules API ({@link RulesApiOperations}) as WebMvc.fn routes: the same paths, answers and problems as the WebFlux
 * flavour's, HEAD included. Each operation runs on the servlet thread; a write waits there for the store and for the
 * change to be in force, as the actuator's own write operations do.
 */
final class RulesApiServletRoutes {

    private RulesApiServletRoutes() {
    }

    static RouterFunction<ServerResponse> of(RulesApiOperations api) {
        String path = api.path();
        HandlerFunction<ServerResponse> list = request -> write(api.list(caller(request), instance(request)));
        HandlerFunction<ServerResponse> openApi = request -> write(api.openApi(caller(request), instance(request)));
        HandlerFunction<ServerResponse> get = request -> write(api.get(caller(request),
                request.pathVariable("ruleId"), instance(request)));
        // HEAD answers as GET does (status, ETag, type); the container drops the body and sets its length
        return RouterFunctions.route()
                .GET(path, list).HEAD(path, list)
                .GET(path + RulesApiOperations.openApiPath(), openApi)
                .HEAD(path + RulesApiOperations.openApiPath(), openApi)
                .GET(path + "/{ruleId}", get).HEAD(path + "/{ruleId}", get)
                .PUT(path + "/{ruleId}", request -> write(api.put(caller(request), request.pathVariable("ruleId"),
                        request.headers().asHttpHeaders(), () -> body(request), instance(request))))
                .DELETE(path + "/{ruleId}", request -> write(api.delete(caller(request),
                        request.pathVariable("ruleId"), request.headers().asHttpHeaders(), instance(request))))
                // anything else on the API's paths is the API's 404 or 405, never a gateway route's
                .route(RequestPredicates.path(path).or(RequestPredicates.path(path + "/**")),
                        request -> write(api.elsewhere(request.method().name(), instance(request))))
                .build();
    }

    /** The what-if replay below a rule, tried before the API's own routes (their 404/405). */
    static RouterFunction<ServerResponse> whatIf(RulesApiOperations api, WhatIfOperations whatIf) {
        return RouterFunctions.route().POST(api.path() + WhatIfOperations.PATH, request -> write(whatIf.whatIf(
                caller(request), request.pathVariable("ruleId"), request.headers().asHttpHeaders(),
                () -> body(request), instance(request)))).build();
    }

    static byte[] body(ServerRequest request) {
        return RulesApiOperations.readBody(() -> request.servletRequest().getInputStream());
    }

    static Principal caller(ServerRequest request) {
        return request.principal().orElse(RulesApiOperations.anonymous());
    }

    static String instance(ServerRequest request) {
        return request.requestPath().pathWithinApplication().value();
    }

    /** An answer of the operator APIs (the rules API's, the usage API's) as the servlet response. */
    static ServerResponse write(RulesApiOperations.Answer answer) {
        ServerResponse.BodyBuilder response = ServerResponse.status(answer.status())
                .headers(headers -> headers.addAll(answer.headers()));
        return answer.body() == null ? response.build() : response.body(answer.body());
    }
}
