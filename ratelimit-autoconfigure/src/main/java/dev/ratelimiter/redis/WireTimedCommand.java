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
 * <p>When the timer finds no reply:
 * <ul>
 * <li>if it ran late — by more than a fifth of the timeout — this process did not get the CPU when it asked for it,
 * and a Redis on the same machine will not have either: Redis is given as long again, as many times as the timer keeps
 * running late, never past {@code bound} after the write;</li>
 * <li>otherwise it looks once more after one more pass of the loop over its sockets (a reply that arrived between the
 * loop's poll and the timer is read then), and only then fails the command with {@link StoreTimeoutException}.</li>
 * </ul>
 * A Redis that stops answering is thereby noticed {@code timeout} after the write plus the lag of this thread, doubled
 * at most, and never later than {@code bound}. The command stays in Lettuce's stack, as after Lettuce's own command
 * timeout, so the connection stays in step with Redis's replies. Written again (Lettuce replays it after a reconnect, a
 * cluster redirect), the command is timed again from that write.
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
     * @param boundNanos the longest the call is waited for after its write, however late this process runs
     */
    record Timing(long timeoutNanos, long boundNanos) {

        static Timing of(Duration timeout, Duration bound) {
            return new Timing(timeout.toNanos(), Math.max(timeout.toNanos(), bound.toNanos()));
        }

        /** Lateness of the timer that counts as this process not having had the CPU. */
        long lateNanos() {
            return timeoutNanos / 5;
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
        private long dueAt;
        private boolean lookedAgain;
        private volatile Future<?> onLoop;
        private volatile Disposable elsewhere;

        Deadline(EventExecutor loop) {
            this.loop = loop;
            runIn(timing.timeoutNanos());
        }

        private void runIn(long nanos) {
            dueAt = System.nanoTime() + nanos;
            if (loop != null) {
                onLoop = loop.schedule(this, nanos, TimeUnit.NANOSECONDS);
            }
            else {
                elsewhere = Background.scheduler().schedule(this, nanos, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void run() {
            if (isDone() || deadline != this) {
                return;
            }
            long now = System.nanoTime();
            long late = now - dueAt;
            if (late > timing.lateNanos() && now + late - writtenAt <= timing.boundNanos()) {
                // This thread waited for the CPU: Redis, likely on the same machine, may have waited as long.
                runIn(late);
                return;
            }
            if (loop != null && !lookedAgain) {
                // Scheduled tasks that fall due while the loop runs its task queue wait for the next pass, which
                // starts by reading the sockets: a reply already here is read before this runs again.
                lookedAgain = true;
                runIn(0);
                return;
            }
            completeExceptionally(new StoreTimeoutException("Redis did not answer within "
                    + TimeUnit.NANOSECONDS.toMicros(now - writtenAt) / 1000.0 + " ms of the call being sent"));
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
