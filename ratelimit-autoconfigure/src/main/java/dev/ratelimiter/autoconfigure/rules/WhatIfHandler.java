package dev.ratelimiter.autoconfigure.rules;

import java.security.Principal;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * {@link WhatIfOperations} on WebFlux: the body read without blocking, then the Kafka read and the replay on a
 * bounded-elastic thread, never on the event loop (the operations cap how many run at once).
 */
public final class WhatIfHandler {

    private final WhatIfOperations operations;

    public WhatIfHandler(WhatIfOperations operations) {
        this.operations = operations;
    }

    /** The what-if route below the rules API's mount; to be tried before the API's own routes (their 404/405). */
    public static RouterFunction<ServerResponse> routes(RulesApiMount mount, WhatIfHandler handler) {
        return RouterFunctions.route().POST(mount.path() + WhatIfOperations.PATH, handler::post).build();
    }

    Mono<ServerResponse> post(ServerRequest request) {
        String id = request.pathVariable("ruleId");
        HttpHeaders headers = request.headers().asHttpHeaders();
        String instance = request.requestPath().pathWithinApplication().value();
        return request.principal().map(caller -> (Principal) caller).defaultIfEmpty(RulesApiOperations.anonymous())
                .flatMap(caller -> RuleDocumentReader.body(request)
                        .flatMap(bytes -> Mono.fromSupplier(() -> operations.whatIf(caller, id, headers, () -> bytes,
                                instance)).subscribeOn(Schedulers.boundedElastic()))
                        .onErrorResume(RuleApiRefusal.class, refusal -> Mono.just(RuleProblems.answer(instance,
                                refusal.status, refusal.error, refusal.field, refusal.getMessage()))))
                .flatMap(answer -> ServerResponse.status(answer.status())
                        .headers(written -> written.addAll(answer.headers())).bodyValue(answer.body()));
    }
}
