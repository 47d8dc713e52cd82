package dev.ratelimiter.redis;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;

/** A limiter connection to a test Redis, with the Lettuce client it was opened from; closing it closes both. */
public final class TestConnection implements AutoCloseable {

    private final RedisClient client;
    private final LimiterConnection connection;

    private TestConnection(RedisClient client, LimiterConnection connection) {
        this.client = client;
        this.connection = connection;
    }

    /** Opens a connection and waits (at most 10 s) until it is open. */
    public static TestConnection open(String host, int port) {
        RedisClient client = RedisClient.create(RedisURI.create(host, port));
        LimiterConnection connection = new LimiterConnection(() -> client, host + ":" + port, Duration.ofSeconds(2),
                Duration.ofMillis(100));
        connection.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!connection.connected() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (!connection.connected()) {
            throw new IllegalStateException("no connection to Redis at " + host + ":" + port + ": "
                    + connection.lastFailure());
        }
        return new TestConnection(client, connection);
    }

    public LimiterConnection connection() {
        return connection;
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
