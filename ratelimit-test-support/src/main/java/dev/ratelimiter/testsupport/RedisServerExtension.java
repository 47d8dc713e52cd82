package dev.ratelimiter.testsupport;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension giving a test class its own real Redis server, started before the first test and
 * stopped after the last. Register it on a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisServerExtension redis = new RedisServerExtension();
 * }</pre>
 *
 * The server starts in {@code beforeAll}, or earlier on first use of any accessor, so a
 * {@code @DynamicPropertySource} method may read {@link #url()} whenever Spring asks for it.
 *
 * <p>{@link #shared()} gives the class the test JVM's {@link SharedRedisServer} instead, emptied before the class.
 */
public final class RedisServerExtension implements BeforeAllCallback, AfterAllCallback {

    private final boolean shared;
    private RedisServer server;

    /** A server of the class's own, started for it and stopped after it: one the class may kill or pause. */
    public RedisServerExtension() {
        this(false);
    }

    private RedisServerExtension(boolean shared) {
        this.shared = shared;
    }

    /**
     * The test JVM's shared server, made to look freshly started (empty, no scripts, no statistics) before the class,
     * and left running after it; see {@link SharedRedisServer} for what the class must not do with it.
     */
    public static RedisServerExtension shared() {
        return new RedisServerExtension(true);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        if (shared) {
            SharedRedisServer.reset();
        }
        server();
    }

    /**
     * Stops the server once the class has ended, after every other {@code afterAll} callback: a Spring context the
     * class marked dirty is closed while its Redis still answers (see {@link ClosedAfterTheClass}).
     */
    @Override
    public void afterAll(ExtensionContext context) {
        if (shared) {
            return;
        }
        ClosedAfterTheClass.closeWhenTheClassEnds(context, this, this::stop);
    }

    private synchronized void stop() {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    /** The running server, started on first use. */
    public synchronized RedisServer server() {
        if (server == null) {
            server = shared ? SharedRedisServer.get() : RedisServers.start();
        }
        return server;
    }

    public String host() {
        return server().host();
    }

    public int port() {
        return server().port();
    }

    public String url() {
        return server().url();
    }

    /** Sends one command to the server and returns the raw reply; see {@link RedisServer#command}. */
    public String command(String... arguments) {
        return server().command(arguments);
    }
}
