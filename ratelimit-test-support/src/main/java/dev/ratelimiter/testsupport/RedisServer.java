package dev.ratelimiter.testsupport;

/**
 * A real Redis server owned by a test, with the controls fault-injection tests need.
 *
 * <p>Every method blocks until the server is in the requested state (or fails with an exception):
 * a test never has to guess whether the fault it injected is in effect yet.
 */
public interface RedisServer extends AutoCloseable {

    /** Host to connect to; always a loopback address. */
    String host();

    /** Port to connect to; stays the same across {@link #restart()}. */
    int port();

    /** Connection URL in the form Spring Boot's {@code spring.data.redis.url} accepts. */
    default String url() {
        return "redis://" + host() + ":" + port();
    }

    /** Which kind of server this is (container, process from PATH, embedded binary); for test logs. */
    String description();

    /** Kills the server abruptly (SIGKILL for a process): no shutdown, no save, connections reset. */
    void kill();

    /** Freezes the server (SIGSTOP / docker pause): connections stay open but nothing is answered. */
    void pause();

    /** Thaws a paused server (SIGCONT / docker unpause). */
    void resume();

    /** Starts the server again on the same port after {@link #kill()}, empty (nothing is persisted). */
    void restart();

    /** Whether the server is running and not paused. */
    boolean isRunning();

    /** Sends one inline command (e.g. {@code FLUSHALL}, {@code INFO commandstats}) and returns the raw reply. */
    String command(String... arguments);

    /** Stops the server for good and removes its working directory. */
    @Override
    void close();
}
