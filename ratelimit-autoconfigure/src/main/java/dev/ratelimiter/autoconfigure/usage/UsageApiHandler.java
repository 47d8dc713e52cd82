package dev.ratelimiter.autoconfigure.usage;

import java.security.Principal;

import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The usage API on WebFlux: {@code GET} (and {@code HEAD}) at its path, the caller from the request's principal,
 * nothing blocking (the store's reply arrives on its own thread and is written from there). Any other method there is
 * answered 405.
 */
public final class UsageApiHandler {

    private final UsageOperations operations;

    public UsageApiHandler(UsageOperations operations) {
        this.operations = operations;
    }

    /** The routes at {@code path} (the usage path of the rules API's mount). */
    public RouterFunction<ServerResponse> routes(String path) {
        return RouterFunctions.route()
                .GET(path, this::read).HEAD(path, this::read)
                .route(RequestPredicates.path(path), this::otherMethod)
                .build();
    }

    Mono<ServerResponse> read(ServerRequest request) {
        String instance = instance(request);
        return request.principal().map(caller -> (Principal) caller)
                .defaultIfEmpty(RulesApiOperations.anonymous())
                .flatMap(caller -> operations.read(caller, request.queryParams(), instance))
                .flatMap(UsageApiHandler::write);
    }

    Mono<ServerResponse> otherMethod(ServerRequest request) {
        return write(UsageOperations.onlyReads(instance(request)));
    }

    /** An answer as the response, as the rules API writes its own. */
    public static Mono<ServerResponse> write(RulesApiOperations.Answer answer) {
        ServerResponse.BodyBuilder response = ServerResponse.status(answer.status())
                .headers(headers -> headers.addAll(answer.headers()));
        return answer.body() == null ? response.build() : response.bodyValue(answer.body());
    }

    private static String instance(ServerRequest request) {
        return request.requestPath().pathWithinApplication().value();
    }
}
