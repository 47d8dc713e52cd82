package dev.ratelimiter.gateway.webflux;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimiter.core.RateLimitStore;
import io.netty.channel.EventLoop;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;
import reactor.util.context.Context;

/**
 * The scheduler of the Netty event loop that serves a request, so that work resumed after a store call runs where
 * the request started instead of on a Redis client thread. One scheduler per event loop, made once.
 */
final class EventLoops {

    private static final Map<EventLoop, Scheduler> schedulers = new ConcurrentHashMap<>();

    private EventLoops() {
    }

    /**
     * Decides on the request's event loop: the store call's timeout is timed there (see
     * {@link RateLimitStore#TIMER_SCHEDULER}), and the chain resumes there — at once when the verdict arrives there
     * already (a decision made from memory: local mode, the denial cache), else by a hop (a Redis reply on a Lettuce
     * thread, a timeout). A hop costs a task and a thread wake-up per request, so it is skipped where it changes
     * nothing.
     */
    static <T> Mono<T> onRequestLoop(ServerWebExchange exchange, Mono<T> decided) {
        EventLoop loop = loopOf(exchange);
        if (loop == null) {
            return decided.publishOn(Schedulers.parallel());
        }
        Scheduler scheduler = schedulerOf(loop);
        return decided.contextWrite(Context.of(RateLimitStore.TIMER_SCHEDULER, scheduler))
                .flatMap(value -> loop.inEventLoop() ? Mono.just(value) : Mono.just(value).publishOn(scheduler));
    }

    private static EventLoop loopOf(ServerWebExchange exchange) {
        Object nativeRequest;
        try {
            nativeRequest = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
        }
        catch (RuntimeException noNativeRequest) {
            // A request no server made (a mock: IllegalStateException), or one a user filter wrapped in its own
            // ServerHttpRequest rather than a ServerHttpRequestDecorator (IllegalArgumentException): no loop known.
            // The decision runs all the same; only the hop back to the connection's loop is lost.
            return null;
        }
        return nativeRequest instanceof Connection connection ? connection.channel().eventLoop() : null;
    }

    private static Scheduler schedulerOf(EventLoop loop) {
        return schedulers.computeIfAbsent(loop, l -> Schedulers.fromExecutorService(l, "ratelimit-" + l));
    }
}
