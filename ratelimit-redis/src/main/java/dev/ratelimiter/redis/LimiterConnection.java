package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import dev.ratelimiter.core.StoreNotConnectedException;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;

/**
 * The limiter's own connection to Redis, opened from the application's Lettuce client on a background thread and
 * never on a request thread.
 *
 * <p>Spring Data Redis opens its shared connection on first use, synchronously, on whichever thread asks — for a
 * gateway, a Netty event loop — and a Redis that drops connection attempts then holds that loop for the whole connect
 * timeout on every request. Here a single daemon thread ({@code ratelimit-redis-connect}) does all the connecting,
 * retrying with a capped back-off until Redis answers; until then every call fails at once with
 * {@link NotConnectedException}, which the fail-safe store turns into a fallback decision without waiting. Once open,
 * Lettuce reconnects the connection by itself, and calls never wait on a connect again.
 *
 * <p>The connection is the limiter's alone: the application's other Redis traffic cannot queue ahead of a decision
 * that has 5 ms to live. Its command timeout is at most {@code commandTimeout}, so calls given up on by their caller
 * are cleaned up soon rather than after Lettuce's default minute. Standalone, Sentinel and Cluster clients are used
 * exactly as the application configured them (addresses, credentials, TLS, client options).
 *
 * <p>Its parts: the {@link ConnectThread} connects and retries, one {@link DispatchThread} hands commands to Lettuce,
 * {@link ScriptSender} sends scripts, and {@link ChannelSubscriptions} keeps the channels listened to on a pub/sub
 * connection of their own.
 */
public final class LimiterConnection implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(LimiterConnection.class);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(2);

    private final Supplier<AbstractRedisClient> client;
    private final String description;
    private final Duration commandTimeout;
    private final ConnectThread connector;
    private final DispatchThread dispatch = new DispatchThread("ratelimit-redis-dispatch");
    private final ScriptSender scripts = new ScriptSender(dispatch);
    private final ChannelSubscriptions channels;
    private final List<Runnable> whenConnected = new CopyOnWriteArrayList<>();
    private final OpenLinks links = new OpenLinks();
    private volatile StatefulConnection<String, String> connection;
    private volatile boolean closed;
    private volatile boolean suspended;
    private volatile String lastFailure;
    private int attempts;

    /**
     * @param client the application's Lettuce client; may answer {@code null} until it has been created
     * @param description where Redis is, for log lines
     * @param commandTimeout the longest a command of this connection may stay unanswered
     * @param maxRetryDelay the longest pause between two connection attempts
     */
    public LimiterConnection(Supplier<AbstractRedisClient> client, String description, Duration commandTimeout,
            Duration maxRetryDelay) {
        // Read the scripts now, on the thread that builds the connection: first touched on a timer or an event loop,
        // their class would read the classpath there.
        LimiterScript.values();
        this.client = client;
        this.description = description;
        this.commandTimeout = commandTimeout;
        this.connector = new ConnectThread(maxRetryDelay, () -> closed || suspended);
        this.channels = new ChannelSubscriptions(client, description, connector,
                () -> !closed && !suspended && connection != null);
    }

    /** Starts connecting in the background (again, after {@link #suspend}); returns at once. */
    public void start() {
        suspended = false;
        connector.submit(this::connect);
    }

    /**
     * Closes the connections and opens none until {@link #start} is called again. Called before the application's
     * Redis client is shut down (on shutdown, or when a context is paused): a connection this class opened, or was
     * opening, while Lettuce shut its client down could leave that shutdown waiting for ever, and a connection closed
     * under it by the client would never be replaced. Waits at most {@code wait} for an attempt in progress.
     */
    public void suspend(Duration wait) {
        suspended = true;
        CompletableFuture<Void> done = new CompletableFuture<>();
        connector.submit(() -> {
            closeConnections();
            done.complete(null);
        });
        try {
            done.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (Exception ex) {
            logger.warn("The rate limiter's connection to Redis ({}) did not close within {}", description, wait);
        }
    }

    private void closeConnections() {
        StatefulConnection<String, String> open = connection;
        connection = null;
        links.forget();
        closeQuietly(channels.detach());
        closeQuietly(open);
    }

    /** Whether the connection has been opened (Lettuce may be reconnecting it right now). */
    public boolean connected() {
        return connection != null;
    }

    /** Where Redis is, as configured. */
    public String description() {
        return description;
    }

    /** Why the last connection attempt failed, or {@code null}. */
    public String lastFailure() {
        return lastFailure;
    }

    /** Runs {@code action} once, when the connection is open (at once, on this thread, when it already is). */
    public void whenConnected(Runnable action) {
        AtomicBoolean ran = new AtomicBoolean();
        Runnable once = () -> {
            if (ran.compareAndSet(false, true)) {
                action.run();
            }
        };
        whenConnected.add(once);
        if (connected()) {
            once.run();
        }
    }

    /**
     * Runs a script by SHA, and by body once when Redis does not know it. Never blocks: the command is handed to the
     * dispatch thread; without a connection the future fails at once with {@link NotConnectedException} (nothing was
     * sent). The future completes on a Lettuce I/O thread. Only Lettuce's command timeout applies.
     */
    public <T> CompletableFuture<T> script(LimiterScript script, ScriptOutputType type, String[] keys,
            String... arguments) {
        StatefulConnection<String, String> open = connection;
        if (open == null) {
            return CompletableFuture.failedFuture(new NotConnectedException(description, lastFailure));
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        dispatch.submit(() -> scripts.send(open, script, type, keys, arguments, null, result));
        return result;
    }

    /**
     * Runs {@code task} on the dispatch thread, where {@link #scriptHere} may be called: for callers that gather
     * several commands into one before sending.
     */
    void onDispatchThread(Runnable task) {
        dispatch.submit(task);
    }

    /**
     * {@link #script}, already on the dispatch thread, and failed with a {@link dev.ratelimiter.core.StoreTimeoutException}
     * when Redis has not answered in time once the call was written (see {@link WireTimedCommand}). Fails at once with {@link NotConnectedException}, sending nothing, when the connection that would carry it is down
     * (Lettuce would hold the call until it reconnects).
     */
    <T> CompletableFuture<T> scriptHere(LimiterScript script, ScriptOutputType type, String[] keys,
            String[] arguments, WireTimedCommand.Timing timing) {
        StatefulConnection<String, String> open = connection;
        if (open == null) {
            return CompletableFuture.failedFuture(new NotConnectedException(description, lastFailure));
        }
        if (!links.carries(open, keys)) {
            return CompletableFuture.failedFuture(new NotConnectedException(description, "the connection to Redis "
                    + "that would carry the call is down; Lettuce is reconnecting it"));
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        scripts.send(open, script, type, keys, arguments, timing, result);
        return result;
    }

    /**
     * Opens a connection to every primary and loads every script there, waiting until {@code deadlineNanos}
     * ({@link System#nanoTime}) at most: for start-up, so that no early decision pays for either. How many primaries
     * are warm (0 when the connection is not open).
     */
    public int warmPrimaries(long deadlineNanos) {
        StatefulConnection<String, String> open = connection;
        return open == null ? 0 : PrimaryWarmup.warm(open, deadlineNanos);
    }

    /**
     * Messages published on {@code channel}, for as long as the flux is subscribed. The subscription is made on a
     * pub/sub connection of its own, opened in the background once the main connection is open, and renewed by
     * Lettuce after a reconnect. Messages published while it is not open are missed: callers poll as a backstop.
     */
    public Flux<String> messages(String channel) {
        return channels.messages(channel);
    }

    @Override
    public void close() {
        closed = true;
        dispatch.stop();
        connector.stop();
        closeConnections();
        channels.completeAll();
    }

    private void connect() {
        if (closed || suspended || connection != null) {
            return;
        }
        try {
            StatefulConnection<String, String> opened = open();
            if (opened.getTimeout() == null || opened.getTimeout().compareTo(commandTimeout) > 0) {
                opened.setTimeout(commandTimeout);
            }
            // Flushed by Lettuce as each command is written: with flushing left to the dispatch thread, commands
            // Lettuce writes by itself (to a cluster node still connecting, after a MOVED redirect, after a reconnect)
            // would wait for the next command of ours. Decisions that arrive together share one command anyway.
            connection = opened;
            if (attempts > 0) {
                logger.info("The rate limiter's connection to Redis ({}) is open, after {} failed attempt(s)",
                        description, attempts);
            }
            lastFailure = null;
            whenConnected.forEach(LimiterConnection::runQuietly);
            channels.connect();
        }
        catch (RuntimeException ex) {
            attempts++;
            lastFailure = ex.toString();
            if (attempts == 1) {
                logger.info("Cannot open the rate limiter's connection to Redis ({}) yet; retrying in the "
                        + "background: {}", description, ex.toString());
            }
            connector.retry(this::connect, attempts);
        }
    }

    private StatefulConnection<String, String> open() {
        AbstractRedisClient redisClient = client.get();
        if (redisClient == null) {
            throw new IllegalStateException("the application's Redis client has not been created yet");
        }
        if (redisClient instanceof RedisClusterClient cluster) {
            return cluster.connect(StringCodec.UTF8);
        }
        return ((RedisClient) redisClient).connect(StringCodec.UTF8);
    }

    private static void runQuietly(Runnable action) {
        try {
            action.run();
        }
        catch (RuntimeException ex) {
            logger.warn("A task waiting for the Redis connection failed", ex);
        }
    }

    /** Closes without waiting past {@link #CLOSE_WAIT}: Lettuce's own {@code close()} waits for ever. */
    private static void closeQuietly(StatefulConnection<?, ?> open) {
        if (open != null) {
            try {
                open.closeAsync().get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            catch (Exception ignored) {
                // closing anyway; what Lettuce has not closed by now it closes with its client
            }
        }
    }

    /** A call made while the limiter's connection to Redis (or the part of it that would carry the call) was not open. */
    public static final class NotConnectedException extends StoreNotConnectedException {

        NotConnectedException(String description, String lastFailure) {
            super("the rate limiter's connection to Redis (" + description + ") is not open"
                    + (lastFailure != null ? ": " + lastFailure : ""));
        }
    }
}
