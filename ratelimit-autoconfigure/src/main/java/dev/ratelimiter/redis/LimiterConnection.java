package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

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
 */
public final class LimiterConnection implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(LimiterConnection.class);
    private static final long FIRST_RETRY_MILLIS = 10;
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(2);

    private final Supplier<AbstractRedisClient> client;
    private final String description;
    private final Duration commandTimeout;
    private final Duration maxRetryDelay;
    private final ScheduledExecutorService connector;
    private final DispatchThread dispatch = new DispatchThread("ratelimit-redis-dispatch");
    private final List<Runnable> whenConnected = new CopyOnWriteArrayList<>();
    private final Map<String, Set<FluxSink<String>>> listeners = new ConcurrentHashMap<>();
    private final Set<String> subscribed = ConcurrentHashMap.newKeySet();
    private volatile StatefulConnection<String, String> connection;
    private volatile RedisClusterAsyncCommands<String, String> commands;
    private volatile StatefulRedisPubSubConnection<String, String> pubSub;
    private volatile boolean closed;
    private volatile boolean suspended;
    private volatile String lastFailure;
    private int attempts;
    private int pubSubAttempts;

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
        this.maxRetryDelay = maxRetryDelay.isZero() || maxRetryDelay.isNegative() ? Duration.ofSeconds(1)
                : maxRetryDelay;
        this.connector = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "ratelimit-redis-connect");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Starts connecting in the background (again, after {@link #suspend}); returns at once. */
    public void start() {
        suspended = false;
        submit(this::connect);
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
        submit(() -> {
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
        StatefulRedisPubSubConnection<String, String> openPubSub = pubSub;
        StatefulConnection<String, String> open = connection;
        commands = null;
        connection = null;
        pubSub = null;
        subscribed.clear();
        closeQuietly(openPubSub);
        closeQuietly(open);
    }

    /** Whether the connection has been opened (Lettuce may be reconnecting it right now). */
    public boolean connected() {
        return commands != null;
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
     * sent). The future completes on a Lettuce I/O thread.
     */
    public <T> CompletableFuture<T> script(LimiterScript script, ScriptOutputType type, String[] keys,
            String... arguments) {
        RedisClusterAsyncCommands<String, String> async = commands;
        if (async == null) {
            return CompletableFuture.failedFuture(new NotConnectedException(description, lastFailure));
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        dispatch.submit(() -> runScript(async, script, type, keys, arguments, result, true));
        return result;
    }

    /**
     * Runs {@code task} on the dispatch thread, where {@link #scriptHere} may be called: for callers that gather
     * several commands into one before sending.
     */
    void onDispatchThread(Runnable task) {
        dispatch.submit(task);
    }

    /** {@link #script}, already on the dispatch thread. */
    <T> CompletableFuture<T> scriptHere(LimiterScript script, ScriptOutputType type, String[] keys,
            String[] arguments) {
        RedisClusterAsyncCommands<String, String> async = commands;
        if (async == null) {
            return CompletableFuture.failedFuture(new NotConnectedException(description, lastFailure));
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        runScript(async, script, type, keys, arguments, result, true);
        return result;
    }

    private <T> void runScript(RedisClusterAsyncCommands<String, String> async, LimiterScript script,
            ScriptOutputType type, String[] keys, String[] arguments, CompletableFuture<T> result, boolean bySha) {
        try {
            RedisFuture<T> call = bySha ? async.evalsha(script.sha1(), type, keys, arguments)
                    : async.eval(script.body(), type, keys, arguments);
            call.whenComplete((value, failure) -> {
                if (failure == null) {
                    result.complete(value);
                }
                else if (bySha && unwrap(failure) instanceof RedisNoScriptException) {
                    // After a restart, a failover or SCRIPT FLUSH: send the body once, which caches it again.
                    dispatch.submit(() -> runScript(async, script, type, keys, arguments, result, false));
                }
                else {
                    result.completeExceptionally(unwrap(failure));
                }
            });
        }
        catch (RuntimeException ex) {
            result.completeExceptionally(ex);
        }
    }

    /**
     * Messages published on {@code channel}, for as long as the flux is subscribed. The subscription is made on a
     * pub/sub connection of its own, opened in the background once the main connection is open, and renewed by
     * Lettuce after a reconnect. Messages published while it is not open are missed: callers poll as a backstop.
     */
    public Flux<String> messages(String channel) {
        return Flux.create(sink -> {
            Set<FluxSink<String>> sinks = listeners.computeIfAbsent(channel, c -> ConcurrentHashMap.newKeySet());
            sinks.add(sink);
            sink.onDispose(() -> sinks.remove(sink));
            submit(this::connectPubSub);
        });
    }

    @Override
    public void close() {
        closed = true;
        dispatch.stop();
        connector.shutdownNow();
        closeConnections();
        listeners.values().forEach(sinks -> sinks.forEach(FluxSink::complete));
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
            commands = opened instanceof StatefulRedisClusterConnection<String, String> cluster ? cluster.async()
                    : ((StatefulRedisConnection<String, String>) opened).async();
            if (attempts > 0) {
                logger.info("The rate limiter's connection to Redis ({}) is open, after {} failed attempt(s)",
                        description, attempts);
            }
            lastFailure = null;
            whenConnected.forEach(LimiterConnection::runQuietly);
            connectPubSub();
        }
        catch (RuntimeException ex) {
            attempts++;
            lastFailure = ex.toString();
            if (attempts == 1) {
                logger.info("Cannot open the rate limiter's connection to Redis ({}) yet; retrying in the "
                        + "background: {}", description, ex.toString());
            }
            retry(this::connect, attempts);
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

    private void connectPubSub() {
        if (closed || suspended || connection == null || listeners.isEmpty()) {
            return;
        }
        try {
            if (pubSub == null) {
                AbstractRedisClient redisClient = client.get();
                StatefulRedisPubSubConnection<String, String> opened = redisClient instanceof RedisClusterClient cluster
                        ? cluster.connectPubSub(StringCodec.UTF8)
                        : ((RedisClient) redisClient).connectPubSub(StringCodec.UTF8);
                opened.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String channel, String message) {
                        Set<FluxSink<String>> sinks = listeners.get(channel);
                        if (sinks != null) {
                            sinks.forEach(sink -> sink.next(message));
                        }
                    }
                });
                pubSub = opened;
            }
            List<String> missing = new ArrayList<>();
            for (String channel : listeners.keySet()) {
                if (subscribed.add(channel)) {
                    missing.add(channel);
                }
            }
            if (!missing.isEmpty()) {
                pubSub.async().subscribe(missing.toArray(String[]::new)).whenComplete((done, failure) -> {
                    if (failure != null) {
                        missing.forEach(subscribed::remove);
                        submit(() -> retry(this::connectPubSub, ++pubSubAttempts));
                    }
                });
            }
        }
        catch (RuntimeException ex) {
            logger.debug("Cannot subscribe to rule changes in Redis ({}) yet: {}", description, ex.toString());
            retry(this::connectPubSub, ++pubSubAttempts);
        }
    }

    private void retry(Runnable task, int attempt) {
        if (closed || suspended) {
            return;
        }
        long delay = Math.min(maxRetryDelay.toMillis(), FIRST_RETRY_MILLIS << Math.min(attempt, 20));
        try {
            connector.schedule(task, delay, TimeUnit.MILLISECONDS);
        }
        catch (RuntimeException shutDown) {
            // closed meanwhile
        }
    }

    private void submit(Runnable task) {
        try {
            connector.execute(task);
        }
        catch (RuntimeException shutDown) {
            // closed
        }
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
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

    /** A call made before the limiter's connection to Redis was open: nothing was sent. */
    public static final class NotConnectedException extends IllegalStateException {

        NotConnectedException(String description, String lastFailure) {
            super("the rate limiter's connection to Redis (" + description + ") is not open yet"
                    + (lastFailure != null ? ": " + lastFailure : ""));
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            // Thrown for every decision while Redis is away: the stack says nothing the message does not.
            return this;
        }
    }
}
