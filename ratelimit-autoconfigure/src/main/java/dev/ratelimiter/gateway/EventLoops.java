package dev.ratelimiter.gateway;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.netty.channel.EventLoop;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;

/**
 * The scheduler of the Netty event loop that serves a request, so that work resumed after a store call runs where
 * the request started instead of on a Redis client thread. One scheduler per event loop, made once.
 */
final class EventLoops {

    private static final Map<EventLoop, Scheduler> schedulers = new ConcurrentHashMap<>();

    private EventLoops() {
    }

    static Scheduler of(ServerWebExchange exchange) {
        Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
        if (nativeRequest instanceof Connection connection) {
            EventLoop loop = connection.channel().eventLoop();
            return schedulers.computeIfAbsent(loop, l -> Schedulers.fromExecutorService(l, "ratelimit-" + l));
        }
        return Schedulers.parallel();
    }
}
