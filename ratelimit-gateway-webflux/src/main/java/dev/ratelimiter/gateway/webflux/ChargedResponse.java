package dev.ratelimiter.gateway.webflux;

import java.nio.ByteBuffer;

import dev.ratelimiter.gateway.ResponseCharges;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The response of a request charged from its response: each chunk of the body is read as it goes by (nothing kept,
 * nothing delayed, the bytes forwarded as they are), whether the gateway writes it at once or flushes it event by
 * event (a streamed, {@code text/event-stream} answer).
 */
final class ChargedResponse extends ServerHttpResponseDecorator {

    private final ResponseCharges.Pending pending;
    /** Whether the body went out to its end: a client gone mid-body cancels it, and the gateway still completes. */
    private volatile boolean bodyEnded;

    ChargedResponse(ServerHttpResponse delegate, ResponseCharges.Pending pending) {
        super(delegate);
        this.pending = pending;
    }

    @Override
    public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
        pending.headers(getHeaders());
        return super.writeWith(Flux.from(body).doOnNext(this::read).doOnComplete(this::ended));
    }

    @Override
    public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
        pending.headers(getHeaders());
        return super.writeAndFlushWith(Flux.from(body).map(chunks -> Flux.from(chunks).doOnNext(this::read))
                .doOnComplete(this::ended));
    }

    @Override
    public Mono<Void> setComplete() {
        ended();
        return super.setComplete();
    }

    /** Whether the whole body was written (or there was none). */
    boolean bodyEnded() {
        return bodyEnded;
    }

    private void ended() {
        bodyEnded = true;
    }

    private void read(DataBuffer buffer) {
        try (DataBuffer.ByteBufferIterator chunks = buffer.readableByteBuffers()) {
            while (chunks.hasNext()) {
                ByteBuffer chunk = chunks.next();
                pending.read(chunk);
            }
        }
    }
}
