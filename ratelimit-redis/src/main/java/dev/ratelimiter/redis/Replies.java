package dev.ratelimiter.redis;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

import reactor.core.publisher.Mono;

/**
 * Redis replies as {@link Mono}s that a caller may stop waiting for. The caller's cancel (its own timeout, a client
 * gone) reaches a copy of the reply, never the command: the reply may still matter (it reports the permits a script
 * took, a rule write goes on) and a failure that arrives after nobody waits is nobody's to report. With
 * {@code Mono.fromFuture(reply, true)} Reactor reports such a late failure as a dropped error, logged at ERROR with a
 * stack trace — once per decision while Redis is unreachable.
 */
final class Replies {

    private Replies() {
    }

    static <T> Mono<T> of(CompletableFuture<T> reply) {
        return Mono.fromFuture(reply.thenApply(Function.identity()), false);
    }

    /** The call is made when the Mono is subscribed to. */
    static <T> Mono<T> of(Supplier<? extends CompletableFuture<T>> call) {
        return Mono.defer(() -> of(call.get()));
    }
}
