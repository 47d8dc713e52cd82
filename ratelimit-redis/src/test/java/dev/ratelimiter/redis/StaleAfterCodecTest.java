package dev.ratelimiter.redis;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deadline a decision call tells Redis: set when the call is first written, kept when Lettuce writes it again (a
 * command re-sent after a reconnect or to a promoted replica kept spending tokens for requests the fallback had
 * decided long before: an honest client refused seconds after a cluster failover, 2 runs in 11 of
 * RedisClusterFailoverTest), never later than when the gateway decides without Redis anyway.
 */
class StaleAfterCodecTest {

    /** Redis's clock 1,000 s ahead of this JVM's nanoTime, in microseconds. */
    private static final long OFFSET_MICROS = 1_000_000_000L;

    private final StoreClock clock = new StoreClock();

    {
        long now = System.nanoTime();
        clock.read(now / 1000 + OFFSET_MICROS, now);
    }

    private static long encoded(StaleAfterCodec codec) {
        ByteBuf buf = Unpooled.buffer();
        codec.encodeValue(StaleAfterCodec.MARKER, buf);
        return Long.parseLong(buf.toString(StandardCharsets.US_ASCII));
    }

    @Test
    void theDeadlineIsTheFirstWritePlusTheTimeAllowedOnRedissClock() {
        long within = TimeUnit.MILLISECONDS.toNanos(5);
        long before = System.nanoTime();
        long deadline = encoded(new StaleAfterCodec(clock, within, Long.MAX_VALUE));
        long after = System.nanoTime();
        assertThat(deadline).isBetween((before + within) / 1000 + OFFSET_MICROS, (after + within) / 1000 + OFFSET_MICROS);
    }

    @Test
    void aCallWrittenAgainKeepsItsFirstDeadline() {
        StaleAfterCodec codec = new StaleAfterCodec(clock, TimeUnit.MILLISECONDS.toNanos(5), Long.MAX_VALUE);
        long first = encoded(codec);
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        assertThat(encoded(codec)).as("written again 20 ms later").isEqualTo(first);
    }

    @Test
    void aCallFirstWrittenLateGoesStaleWhenItsRequestsAreDecidedWithoutRedis() {
        long latest = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(1);
        long deadline = encoded(new StaleAfterCodec(clock, TimeUnit.MILLISECONDS.toNanos(5), latest));
        assertThat(deadline).isEqualTo(latest / 1000 + OFFSET_MICROS);
    }

    @Test
    void otherArgumentsAreUtf8AsUsual() {
        ByteBuf buf = Unpooled.buffer();
        new StaleAfterCodec(clock, 0, Long.MAX_VALUE).encodeValue("stale-after", buf);
        assertThat(buf.toString(StandardCharsets.UTF_8)).as("an equal string that is not the marker").isEqualTo(
                "stale-after");
    }
}
