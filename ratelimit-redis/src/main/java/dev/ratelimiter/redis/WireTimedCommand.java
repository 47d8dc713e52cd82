package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.core.Background;
import dev.ratelimiter.core.StoreTimeoutException;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.RedisCommand;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import reactor.core.Disposable;

/**
 * A command whose timeout is counted on the wire: from the moment Lettuce's I/O thread writes it to Redis, by a timer
 * on that same thread, so that it measures Redis and not the gateway.
 *
 * <p>The thread that fires this timer is the one that reads Redis's replies, and a Netty event loop reads every
 * socket that is ready before it runs the timers that are due. A reply that reached the gateway in time is therefore
 * read before its timer runs, however late the thread itself is scheduled: a busy gateway (event loops saturated, a
 * garbage-collection pause) waits for its answer instead of deciding without Redis. A timer on any other thread (the
 * request's event loop, a timer thread) fires whenever that thread gets to it, whether or not the answer is already
 * waiting in the socket: on a saturated gateway a third of exact decisions were taken from the fallback that way.
 *
 * <p>When the timer finds no reply it looks once more after one more pass of the loop over its sockets (a reply that
 * arrived between the loop's poll and the timer is read then), and only then fails the command with
 * {@link StoreTimeoutException}. Redis holds up its end with its own clock: a decision call carries the moment after
 * which it must not run (see {@link StaleAfterCodec}), a little before this timer gives up, so a call Redis runs too
 * late to be waited for decides and writes nothing. The command stays in Lettuce's stack, as after Lettuce's own
 * command timeout, so the connection stays in step with Redis's replies. Written again (Lettuce replays it after a
 * reconnect, a cluster redirect), the command is timed again from that write.
 */
final class WireTimedCommand<T> extends AsyncCommand<String, String, T> {

    private final Timing timing;
    private volatile Deadline deadline;

    WireTimedCommand(RedisCommand<String, String, T> command, Timing timing) {
        super(command);
        this.timing = timing;
    }

    /**
     * How a call is timed.
     *
     * @param timeoutNanos how long Redis may stay silent once the call is written
     * @param clock Redis's clock, for a call that tells Redis when it goes stale ({@link StaleAfterCodec#MARKER} among
     * its arguments); null for one that does not
     * @param latestNanos when ({@link System#nanoTime}) the call's requests are decided without Redis whether or not it
     * was written: Redis must not run it later
     */
    record Timing(long timeoutNanos, StoreClock clock, long latestNanos) {

        /** For a call that does not tell Redis when it goes stale. */
        static Timing of(Duration timeout, StoreClock clock) {
            return new Timing(timeout.toNanos(), clock, Long.MAX_VALUE);
        }

        /**
         * How long after its write Redis may still run the call: the timeout, less a margin for the answer's way back
         * (a tenth of it, at least 0.2 ms, at most half of it), so that an answer Redis sends in time is read before
         * the timer gives up.
         */
        long runWithinNanos() {
            long margin = Math.min(timeoutNanos / 2, Math.max(timeoutNanos / 10, 200_000));
            return timeoutNanos - margin;
        }
    }

    @Override
    public void encode(ByteBuf buf) {
        super.encode(buf);
        Deadline previous = deadline;
        if (previous != null) {
            previous.disarm();
        }
        deadline = new Deadline(ThreadExecutorMap.currentExecutor());
    }

    @Override
    public void complete() {
        super.complete();
        disarm();
    }

    @Override
    public boolean completeExceptionally(Throwable failure) {
        boolean completed = super.completeExceptionally(failure);
        disarm();
        return completed;
    }

    @Override
    public void cancel() {
        super.cancel();
        disarm();
    }

    private void disarm() {
        Deadline armed = deadline;
        if (armed != null) {
            armed.disarm();
        }
    }

    /** One write's timer: on the writing event loop, or (never expected: Lettuce writes on its loops) a timer thread. */
    private final class Deadline implements Runnable {

        private final EventExecutor loop;
        private final long writtenAt = System.nanoTime();
        private boolean lookedAgain;
        private volatile Future<?> onLoop;
        private volatile Disposable elsewhere;

        Deadline(EventExecutor loop) {
            this.loop = loop;
            if (loop != null) {
                onLoop = loop.schedule(this, timing.timeoutNanos(), TimeUnit.NANOSECONDS);
            }
            else {
                elsewhere = Background.scheduler().schedule(this, timing.timeoutNanos(), TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void run() {
            if (isDone() || deadline != this) {
                return;
            }
            if (loop != null && !lookedAgain) {
                // Scheduled tasks that fall due while the loop runs its task queue wait for the next pass, which
                // starts by reading the sockets: a reply already here is read before this runs again.
                lookedAgain = true;
                onLoop = loop.schedule(this, 0, TimeUnit.NANOSECONDS);
                return;
            }
            completeExceptionally(new StoreTimeoutException("Redis did not answer within "
                    + TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - writtenAt) / 1000.0
                    + " ms of the call being sent"));
        }

        void disarm() {
            Future<?> scheduled = onLoop;
            if (scheduled != null) {
                scheduled.cancel(false);
            }
            Disposable timer = elsewhere;
            if (timer != null) {
                timer.dispose();
            }
        }
    }
}
