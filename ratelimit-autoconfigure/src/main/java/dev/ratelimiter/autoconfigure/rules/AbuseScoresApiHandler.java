package dev.ratelimiter.autoconfigure.rules;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The abuse scores of the rules API ({@link AbuseScoreOperations}) on WebFlux, answered as the rules are
 * ({@link RulesApiHandler}): writes off the event loop (publishing waits for Kafka).
 */
public final class AbuseScoresApiHandler {

    private final AbuseScoreOperations operations;

    public AbuseScoresApiHandler(AbuseScoreOperations operations) {
        this.operations = operations;
    }

    /** Its routes, to be tried before the rules' own (whose {@code /{ruleId}} would take the segment for an id). */
    public RouterFunction<ServerResponse> routes() {
        String path = operations.mount().path() + AbuseScoreOperations.SEGMENT;
        return RouterFunctions.route()
                .GET(path, this::list)
                .GET(path + "/{client}", this::get)
                .PUT(path + "/{client}", this::put)
                .DELETE(path + "/{client}", this::delete)
                .build();
    }

    /** Off the event loop: the list copies up to max-clients ids under the scores' write lock. */
    Mono<ServerResponse> list(ServerRequest request) {
        String instance = RulesApiHandler.instance(request);
        return RulesApiHandler.answer(request, caller -> RulesApiHandler.offTheEventLoop(() -> operations.list(caller,
                instance)));
    }

    Mono<ServerResponse> get(ServerRequest request) {
        String client = request.pathVariable("client");
        return RulesApiHandler.answer(request, caller -> Mono.justOrEmpty(operations.get(caller, client,
                RulesApiHandler.instance(request))));
    }

    Mono<ServerResponse> put(ServerRequest request) {
        String client = request.pathVariable("client");
        HttpHeaders headers = request.headers().asHttpHeaders();
        String instance = RulesApiHandler.instance(request);
        return RulesApiHandler.answer(request, caller -> RuleDocumentReader.body(request)
                .flatMap(bytes -> RulesApiHandler.offTheEventLoop(() -> operations.put(caller, client, headers,
                        () -> bytes, instance)))
                .onErrorResume(RuleApiRefusal.class, refusal -> Mono.just(RuleProblems.answer(instance,
                        refusal.status, refusal.error, refusal.field, refusal.getMessage()))));
    }

    Mono<ServerResponse> delete(ServerRequest request) {
        String client = request.pathVariable("client");
        String instance = RulesApiHandler.instance(request);
        return RulesApiHandler.answer(request, caller -> RulesApiHandler.offTheEventLoop(() -> operations.delete(
                caller, client, instance)));
    }
}
