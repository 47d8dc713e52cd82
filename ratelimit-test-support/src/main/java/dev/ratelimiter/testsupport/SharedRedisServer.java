package dev.ratelimiter.testsupport;

/**
 * One real Redis for the whole test JVM, started on first use, for test classes that only need "a Redis": use it
 * through {@link RedisServerExtension#shared()}, which makes it look freshly started to each class.
 *
 * <p>It is never stopped by a test: the process (or container) goes with the JVM, by {@link ProcessRedisServer}'s
 * shutdown hook (or Testcontainers' reaper). Stopping it earlier, e.g. from JUnit's root store, would stop it before
 * the contexts still in Spring's test-context cache are closed at JVM exit, the shutdown that can wait for ever
 * (lettuce#2278, see {@code spring.properties}).
 *
 * <p>What a class may not do to it, because the next class would find it so: kill, pause, restart or close it. These
 * fail here; a class that needs them keeps a server of its own ({@code new RedisServerExtension()}).
 *
 * <p>Only for classes whose gateways are closed when the class ends ({@code @DirtiesContext}, or closed in
 * {@code @AfterAll}): a gateway left running in the context cache would keep sending its instance heartbeat to this
 * server, and the next class's gateway would count two instances alive.
 */
public final class SharedRedisServer {

    private static RedisServer server;

    private SharedRedisServer() {
    }

    /** The server, started on first use. */
    public static synchronized RedisServer get() {
        if (server == null) {
            server = new Guarded(RedisServers.start());
        }
        return server;
    }

    /**
     * Makes the server look as a freshly started one does to the next class: no keys ({@code FLUSHALL}), no cached
     * scripts ({@code SCRIPT FLUSH}), no statistics ({@code CONFIG RESETSTAT}, e.g. {@code INFO commandstats}).
     */
    static void reset() {
        RedisServer shared = get();
        shared.command("FLUSHALL");
        shared.command("SCRIPT", "FLUSH");
        shared.command("CONFIG", "RESETSTAT");
    }

    /** The shared server with its faults and its end refused. */
    private record Guarded(RedisServer delegate) implements RedisServer {

        @Override
        public String host() {
            return delegate.host();
        }

        @Override
        public int port() {
            return delegate.port();
        }

        @Override
        public String description() {
            return "shared " + delegate.description();
        }

        @Override
        public void kill() {
            throw refused("kill");
        }

        @Override
        public void pause() {
            throw refused("pause");
        }

        @Override
        public void resume() {
            throw refused("resume");
        }

        @Override
        public void restart() {
            throw refused("restart");
        }

        @Override
        public boolean isRunning() {
            return delegate.isRunning();
        }

        @Override
        public String command(String... arguments) {
            return delegate.command(arguments);
        }

        @Override
        public void close() {
            throw refused("close");
        }

        private static UnsupportedOperationException refused(String what) {
            return new UnsupportedOperationException("The test JVM's shared Redis is not to " + what
                    + ": a class that injects faults takes a Redis of its own (new RedisServerExtension())");
        }
    }
}
