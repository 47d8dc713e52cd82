package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.ratelimiter.core.StoreTimeoutException;
import dev.ratelimiter.testsupport.RedisServerExtension;
import io.lettuce.core.ScriptOutputType;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A script call timed on the wire ({@link WireTimedCommand}) against a real Redis, with Lettuce's I/O thread held busy
 * on purpose: the stand-in for a gateway starved of CPU. The thread is held by spinning (not even
 * {@code Thread.onSpinWait}), never by sleeping, so that BlockHound, which watches the event loops, sees nothing, and
 * so that it is busy the way a saturated gateway is.
 *
 * <p>Calls are {@link LimiterScript#CHARGE} with {@code n} keys and nothing to charge: Redis answers {@code n}, so each
 * call's reply says which call it belongs to.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WireTimedCommandTest {

    private static final Duration TIMEOUT = Duration.ofMillis(5);
    /** Far beyond any bound used here: time enough for a loaded machine, short of a hang. */
    private static final Duration SLACK = Duration.ofSeconds(1);

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static TestConnection connection;
    private static EventExecutor ioLoop;
    private static final AtomicInteger keySpace = new AtomicInteger();
    private boolean paused;

    @BeforeAll
    static void connect() throws Exception {
        connection = TestConnection.open(redis.host(), redis.port());
        // Caches the script (a NOSCRIPT answer would add a second write to every call).
        assertThat(send(1, null).reply().get(5, TimeUnit.SECONDS)).isEqualTo(1L);
        // Finds the I/O loop: a call's completion runs on it, unless the call completed before its callback was added
        // (a round trip on loopback can be quicker than this thread's next steps, still interpreted). With Redis
        // paused, the answer can only come after.
        redis.server().pause();
        Call call;
        try {
            call = send(1, null);
        }
        finally {
            redis.server().resume();
        }
        assertThat(call.reply().get(5, TimeUnit.SECONDS)).isEqualTo(1L);
        ioLoop = call.completedOn().get(5, TimeUnit.SECONDS);
        assertThat(ioLoop).as("the event loop that completes the calls").isNotNull();
    }

    @AfterAll
    static void close() {
        connection.close();
    }

    @AfterEach
    void resumeRedis() {
        if (paused) {
            resume();
        }
    }

    @Test
    void aReplyInTheSocketBeforeTheTimerRunsIsTakenHoweverLongTheIoThreadWasBusy() throws Exception {
        // Bound = timeout: no second chance for lateness, so only reading the socket before the timer can save it.
        WireTimedCommand.Timing timing = WireTimedCommand.Timing.of(TIMEOUT, null);
        Runnable openGate = gateLoop();
        Call call = send(2, timing);
        // Queued behind the call's write on the loop: the call is written, its timer armed, then the loop is busy
        // for ten times the timeout while Redis's reply lands in the socket and the timer falls due.
        CompletableFuture<Long> released = holdLoop(Duration.ofMillis(50));
        openGate.run();
        long releasedAt = released.get(5, TimeUnit.SECONDS);

        assertThat(call.reply().get(5, TimeUnit.SECONDS)).as("its own reply, not a timeout").isEqualTo(2L);
        assertThat(call.doneAt().get(5, TimeUnit.SECONDS))
                .as("completed once the loop was free again, well past its deadline")
                .isGreaterThanOrEqualTo(releasedAt);
    }

    @Test
    void aReplyThatLandsJustAfterTheTimerFoundNoneIsTakenOnTheLoopsNextRead() throws Exception {
        WireTimedCommand.Timing timing = WireTimedCommand.Timing.of(TIMEOUT, null);
        pause();
        CompletableFuture<Void> afterTheTimer = new CompletableFuture<>();
        AtomicBoolean replyWritten = new AtomicBoolean();
        Runnable openGate = gateLoop();
        Call call = send(1, timing);
        // Right behind the write: busy past the deadline, then queues a task due after the timer. The loop's next pass
        // reads its sockets (nothing: Redis is paused), runs the timer (no reply) and then that task, during which
        // Redis answers: only a second look, after one more read of the sockets, finds the reply.
        ioLoop.execute(() -> {
            spin(TIMEOUT.plusMillis(2).toNanos());
            ioLoop.schedule(() -> {
                afterTheTimer.complete(null);
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                while (!replyWritten.get() && System.nanoTime() - deadline < 0) {
                    // spinning until Redis has written its reply
                }
            }, 0, TimeUnit.NANOSECONDS);
        });
        openGate.run();
        afterTheTimer.get(5, TimeUnit.SECONDS);
        resume();
        // Redis answers clients in the order they became ready: once a new connection's PING is answered, the reply
        // to the call (sent long before) has been written.
        redis.command("PING");
        replyWritten.set(true);

        assertThat(call.reply()).succeedsWithin(Duration.ofSeconds(5)).isEqualTo(1L);
    }

    @Test
    void aPausedRedisFailsTheCallWithAStoreTimeoutAfterTheTimeout() throws Exception {
        pause();
        Call call = send(1, WireTimedCommand.Timing.of(TIMEOUT, null));

        assertThat(failure(call)).isInstanceOf(StoreTimeoutException.class);
        assertThat(call.took()).isGreaterThanOrEqualTo(TIMEOUT).isLessThan(SLACK);
    }

    @Test
    void aTimerThatRanLateLooksAtTheSocketsOnceMoreAndThenFailsTheCall() throws Exception {
        Duration held = Duration.ofMillis(40);
        pause();
        Runnable openGate = gateLoop();
        Call call = send(1, WireTimedCommand.Timing.of(TIMEOUT, null));
        holdLoop(held);
        openGate.run();

        assertThat(failure(call)).isInstanceOf(StoreTimeoutException.class);
        // Late by the hold, it gives Redis no more time: a Redis that ran the call that late was too late anyway (a
        // decision call would have told it so, see StaleCallTest), and waiting would only hold the request longer.
        assertThat(call.took()).isGreaterThanOrEqualTo(held).isLessThan(held.plus(SLACK));
    }

    @Test
    void theLateReplyOfACallThatTimedOutGoesToItAndLaterCallsGetTheirOwn() throws Exception {
        pause();
        Call timedOut = send(1, WireTimedCommand.Timing.of(TIMEOUT, null));
        assertThat(failure(timedOut)).isInstanceOf(StoreTimeoutException.class);
        // In flight behind it when its reply arrives: had the timed-out call left Lettuce's stack, this one would be
        // handed that reply (1).
        Call behind = send(2, WireTimedCommand.Timing.of(Duration.ofSeconds(3), null));
        resume();

        assertThat(behind.reply().get(5, TimeUnit.SECONDS)).isEqualTo(2L);
        Call third = send(3, WireTimedCommand.Timing.of(Duration.ofSeconds(3), null));
        Call fourth = send(4, WireTimedCommand.Timing.of(TIMEOUT, null));
        assertThat(third.reply().get(5, TimeUnit.SECONDS)).isEqualTo(3L);
        assertThat(fourth.reply().get(5, TimeUnit.SECONDS)).isEqualTo(4L);
        assertThat(failure(timedOut)).as("still the timeout: the late reply changes nothing")
                .isInstanceOf(StoreTimeoutException.class);
    }

    /** One call sent: when it was handed to Lettuce, when it completed (either way) and on which event loop. */
    private record Call(CompletableFuture<Long> reply, long sentAt, CompletableFuture<Long> doneAt,
            CompletableFuture<EventExecutor> completedOn) {

        Duration took() throws Exception {
            return Duration.ofNanos(doneAt.get(5, TimeUnit.SECONDS) - sentAt);
        }
    }

    /** A CHARGE of nothing on {@code keys} new keys, sent as the limiter sends a decision; Redis answers {@code keys}. */
    private static Call send(int keys, WireTimedCommand.Timing timing) throws Exception {
        String[] names = new String[keys];
        String[] arguments = new String[1 + 5 * keys];
        arguments[0] = "1000";
        for (int i = 0; i < keys; i++) {
            names[i] = "wire:" + keySpace.incrementAndGet();
            System.arraycopy(new String[] { "t", "10", "1.0", "0", "0" }, 0, arguments, 1 + 5 * i, 5);
        }
        return onDispatchThread(() -> {
            long sentAt = System.nanoTime();
            CompletableFuture<Long> reply = connection.connection().scriptHere(LimiterScript.CHARGE,
                    ScriptOutputType.INTEGER, names, arguments, timing);
            return new Call(reply, sentAt, reply.handle((value, failure) -> System.nanoTime()),
                    reply.handle((value, failure) -> ThreadExecutorMap.currentExecutor()));
        });
    }

    private static <T> T onDispatchThread(Supplier<T> task) throws Exception {
        CompletableFuture<T> done = new CompletableFuture<>();
        connection.connection().onDispatchThread(() -> {
            try {
                done.complete(task.get());
            }
            catch (RuntimeException ex) {
                done.completeExceptionally(ex);
            }
        });
        return done.get(5, TimeUnit.SECONDS);
    }

    private static Throwable failure(Call call) throws Exception {
        try {
            Long value = call.reply().get(5, TimeUnit.SECONDS);
            throw new AssertionError("expected the call to fail, but Redis answered " + value);
        }
        catch (ExecutionException ex) {
            return ex.getCause();
        }
    }

    /**
     * Holds the I/O loop until the returned action is run (5 s at most), so that what is queued meanwhile runs in one
     * pass of the loop, in order, before it next reads its sockets.
     */
    private static Runnable gateLoop() throws Exception {
        CompletableFuture<Void> inside = new CompletableFuture<>();
        AtomicBoolean open = new AtomicBoolean();
        ioLoop.execute(() -> {
            inside.complete(null);
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (!open.get() && System.nanoTime() - deadline < 0) {
                // spinning: BlockHound counts even Thread.onSpinWait as blocking
            }
        });
        inside.get(5, TimeUnit.SECONDS);
        return () -> open.set(true);
    }

    /** Keeps the I/O loop busy for {@code busy}; completes with the time it let go. */
    private static CompletableFuture<Long> holdLoop(Duration busy) {
        CompletableFuture<Long> released = new CompletableFuture<>();
        ioLoop.execute(() -> {
            spin(busy.toNanos());
            released.complete(System.nanoTime());
        });
        return released;
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            // busy, as a saturated gateway's loop is
        }
    }

    private void pause() {
        redis.server().pause();
        paused = true;
    }

    private void resume() {
        redis.server().resume();
        paused = false;
    }
}
