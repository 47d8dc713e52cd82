package dev.ratelimiter.autoconfigure.rules;

import java.security.Principal;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The rules API ({@link RulesApiOperations}) on WebFlux: the caller from the request's principal, a write's body read
 * without blocking, and the write itself off the event loop (it waits for the store and for the change to be in
 * force).
 */
public final class RulesApiHandler {

    /**
     * How long the unneeded body of a refused request is read before the answer: long enough for any honest client to
     * send the {@link RuleDocumentReader#MAX_BYTES} read at most, short enough that a client sending slowly (or not
     * at all) does not hold its refusal, and the connection, for ever.
     */
    static final Duration DRAIN_WAIT = Duration.ofSeconds(3);

    private final RulesApiOperations operations;

    public RulesApiHandler(RulesApiOperations operations) {
        this.operations = operations;
    }

    Mono<ServerResponse> list(ServerRequest request) {
        return answer(request, caller -> Mono.just(operations.list(caller, instance(request))));
    }

    Mono<ServerResponse> get(ServerRequest request) {
        String id = request.pathVariable("ruleId");
        return answer(request, caller -> Mono.just(operations.get(caller, id, instance(request))));
    }

    Mono<ServerResponse> openApi(ServerRequest request) {
        return answer(request, caller -> Mono.just(operations.openApi(caller, instance(request))));
    }

    Mono<ServerResponse> elsewhere(ServerRequest request) {
        return answer(request, caller -> Mono.just(operations.elsewhere(request.method().name(), instance(request))));
    }

    Mono<ServerResponse> put(ServerRequest request) {
        String id = request.pathVariable("ruleId");
        HttpHeaders headers = request.headers().asHttpHeaders();
        String instance = instance(request);
        return answer(request, caller -> {
            RulesApiOperations.Answer refused = operations.refusedBeforeBody(caller, headers, instance);
            if (refused != null) {
                return Mono.just(refused);
            }
            return RuleDocumentReader.body(request)
                    .flatMap(bytes -> offTheEventLoop(() -> operations.put(caller, id, headers, () -> bytes, instance)))
                    .onErrorResume(RuleApiRefusal.class, refusal -> Mono.just(operations.problem(refusal, instance)));
        });
    }

    Mono<ServerResponse> delete(ServerRequest request) {
        String id = request.pathVariable("ruleId");
        HttpHeaders headers = request.headers().asHttpHeaders();
        return answer(request, caller -> offTheEventLoop(() -> operations.delete(caller, id, headers,
                instance(request))));
    }

    static Mono<RulesApiOperations.Answer> offTheEventLoop(
            Supplier<RulesApiOperations.Answer> operation) {
        return Mono.fromSupplier(operation).subscribeOn(Schedulers.boundedElastic());
    }

    /** The operation for the request's caller (anonymous where nobody authenticated it), written as it answers. */
    static Mono<ServerResponse> answer(ServerRequest request,
            Function<Principal, Mono<RulesApiOperations.Answer>> operation) {
        return request.principal().map(caller -> (Principal) caller).defaultIfEmpty(RulesApiOperations.anonymous())
                .flatMap(operation)
                .flatMap(answer -> drained(request).flatMap(whole -> {
                    ServerResponse.BodyBuilder response = ServerResponse.status(answer.status())
                            .headers(headers -> headers.addAll(answer.headers()));
                    if (!whole) {
                        response.header(HttpHeaders.CONNECTION, "close");
                    }
                    return answer.body() == null ? response.build() : response.bodyValue(answer.body());
                }));
    }

    /**
     * Whether the request's body is read to its end before the answer, when the answer did not need it (a refused
     * write): a connection whose request was not read to its end is not read again, and the client's next request on
     * it would wait for an answer that never comes. At most {@link RuleDocumentReader#MAX_BYTES} are read, for at
     * most {@link #DRAIN_WAIT}, so a refused client can make us neither take in an endless body nor wait for a slow
     * one: past either, reading stops and the answer closes the connection. A body the rule document was read from
     * is whole only if that reading reached its end (a document too large stopped at the bound).
     */
    private static Mono<Boolean> drained(ServerRequest request) {
        Boolean read = RuleDocumentReader.readToEnd(request);
        if (read != null) {
            return Mono.just(read);
        }
        return request.bodyToFlux(DataBuffer.class)
                .scan(0L, (total, buffer) -> {
                    long now = total + buffer.readableByteCount();
                    DataBufferUtils.release(buffer);
                    return now;
                })
                .takeUntil(total -> total > RuleDocumentReader.MAX_BYTES)
                .last(0L)
                .map(total -> total <= RuleDocumentReader.MAX_BYTES)
                .timeout(DRAIN_WAIT, Mono.just(false))
                // read by someone else, to an end unknown: the connection is not trusted with another request
                .onErrorResume(IllegalStateException.class, alreadyRead -> Mono.just(false));
    }

    static String instance(ServerRequest request) {
        return request.requestPath().pathWithinApplication().value();
    }
}
