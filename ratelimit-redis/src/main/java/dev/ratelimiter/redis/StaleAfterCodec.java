package dev.ratelimiter.redis;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.codec.ToByteBufEncoder;
import io.netty.buffer.ByteBuf;

/**
 * UTF-8 strings, except one argument, {@link #MARKER}, written as the moment — in Redis's own clock — after which Redis
 * must not run the call any more: computed when Lettuce's I/O thread first encodes the call, which is when it is first
 * written to Redis. Lettuce encodes a value when it writes its command, so the deadline starts at the write, whatever
 * the gateway's own queues before it.
 *
 * <p>The deadline is the write plus the store timeout, less a margin for the answer's way back: a call Redis runs
 * before it is answered before the gateway's timer gives up on it; a call Redis runs later decides and writes nothing
 * (see {@code rate_limit.lua}), so a request the gateway decided without Redis is never counted by Redis as well. It
 * never moves: a call Lettuce writes again (after a reconnect, to the replica promoted in a failover) keeps its first
 * deadline; and it is never later than {@code latestNanos}, when the gateway has decided the call's requests without
 * Redis whether or not the call was written (a call Lettuce held while its connection was down, written long after).
 */
final class StaleAfterCodec implements RedisCodec<String, String>, ToByteBufEncoder<String, String> {

    /** The argument replaced by the deadline; compared by identity. */
    static final String MARKER = new String("stale-after");

    /** The longest a deadline is written: a long in decimal. */
    private static final int MAX_DIGITS = 20;

    private static final StringCodec UTF8 = StringCodec.UTF8;

    private final StoreClock clock;
    private final long withinNanos;
    private final long latestNanos;
    private volatile String deadline;

    /**
     * @param clock Redis's clock as seen from here
     * @param withinNanos how long after its write Redis may run the call
     * @param latestNanos the latest moment ({@link System#nanoTime}) Redis may run it, however late it is written
     */
    StaleAfterCodec(StoreClock clock, long withinNanos, long latestNanos) {
        this.clock = clock;
        this.withinNanos = withinNanos;
        this.latestNanos = latestNanos;
    }

    private String deadline() {
        String fixed = deadline;
        if (fixed == null) {
            long now = System.nanoTime();
            long until = now + withinNanos - latestNanos < 0 ? now + withinNanos : latestNanos;
            fixed = Long.toString(clock.staleAfter(until, 0));
            deadline = fixed;
        }
        return fixed;
    }

    @Override
    public void encodeKey(String key, ByteBuf target) {
        UTF8.encodeKey(key, target);
    }

    @Override
    public void encodeValue(String value, ByteBuf target) {
        if (value == MARKER) {
            target.writeCharSequence(deadline(), StandardCharsets.US_ASCII);
        }
        else {
            UTF8.encodeValue(value, target);
        }
    }

    @Override
    public int estimateSize(Object keyOrValue) {
        return keyOrValue == MARKER ? MAX_DIGITS : UTF8.estimateSize(keyOrValue);
    }

    @Override
    public boolean isEstimateExact() {
        return false;
    }

    @Override
    public String decodeKey(ByteBuffer bytes) {
        return UTF8.decodeKey(bytes);
    }

    @Override
    public String decodeValue(ByteBuffer bytes) {
        return UTF8.decodeValue(bytes);
    }

    @Override
    public ByteBuffer encodeKey(String key) {
        return UTF8.encodeKey(key);
    }

    @Override
    public ByteBuffer encodeValue(String value) {
        return value == MARKER ? StandardCharsets.US_ASCII.encode(deadline()) : UTF8.encodeValue(value);
    }
}
