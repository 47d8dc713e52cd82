package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A {@code redis-server} child process on a free loopback port, with its own working directory.
 *
 * <p>Persistence is off (no RDB, no AOF), so a restart comes back empty, as a failed-over or replaced
 * cache node would. A shutdown hook kills the process if the test JVM exits without closing it.
 */
final class ProcessRedisServer implements RedisServer {

    private static final String HOST = "127.0.0.1";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);

    private final Path binary;
    private final String kind;
    private final Path workingDirectory;
    private final int port;
    private final Thread killOnExit = new Thread(this::destroyQuietly, "redis-server-reaper");
    private Process process;
    private boolean paused;

    ProcessRedisServer(Path binary, String kind) {
        this.binary = binary;
        this.kind = kind;
        try {
            this.workingDirectory = Files.createTempDirectory("redis-test-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        this.port = freePort();
        Runtime.getRuntime().addShutdownHook(killOnExit);
        start();
    }

    @Override
    public String host() {
        return HOST;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public String description() {
        return kind + " " + binary + " on port " + port;
    }

    @Override
    public synchronized void kill() {
        if (process != null) {
            resumeIfPaused();
            process.destroyForcibly();
            waitFor(process);
            process = null;
        }
    }

    @Override
    public synchronized void pause() {
        requireRunning();
        signal("-STOP");
        paused = true;
    }

    @Override
    public synchronized void resume() {
        requireRunning();
        signal("-CONT");
        paused = false;
    }

    @Override
    public synchronized void restart() {
        kill();
        start();
    }

    @Override
    public synchronized boolean isRunning() {
        return process != null && process.isAlive() && !paused;
    }

    @Override
    public String command(String... arguments) {
        try {
            return RedisProtocol.send(HOST, port, 2_000, arguments);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Redis command " + String.join(" ", arguments) + " failed", ex);
        }
    }

    @Override
    public synchronized void close() {
        kill();
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        }
        catch (IllegalStateException shuttingDown) {
            // The JVM is already exiting; the hook itself will run.
        }
        deleteRecursively(workingDirectory);
    }

    private void start() {
        List<String> command = List.of(binary.toString(),
                "--port", String.valueOf(port),
                "--bind", HOST,
                "--dir", workingDirectory.toString(),
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no",
                "--protected-mode", "no",
                "--logfile", workingDirectory.resolve("redis.log").toString());
        try {
            process = new ProcessBuilder(command)
                    .directory(workingDirectory.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(workingDirectory.resolve("stdout.log").toFile())
                    .start();
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot start " + binary, ex);
        }
        paused = false;
        awaitPong();
    }

    private void awaitPong() {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        IOException last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server exited at start with code " + process.exitValue()
                        + "; see " + workingDirectory.resolve("redis.log"));
            }
            try {
                if ("PONG".equals(RedisProtocol.send(HOST, port, 500, "PING"))) {
                    return;
                }
            }
            catch (IOException ex) {
                last = ex;
            }
            sleep(20);
        }
        throw new IllegalStateException("redis-server did not answer PING within " + START_TIMEOUT, last);
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", signal, String.valueOf(process.pid())).start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill " + signal + " " + process.pid() + " failed");
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    private void resumeIfPaused() {
        if (paused && process.isAlive()) {
            signal("-CONT");
            paused = false;
        }
    }

    private void requireRunning() {
        if (process == null || !process.isAlive()) {
            throw new IllegalStateException("redis-server is not running");
        }
    }

    private void destroyQuietly() {
        Process running = process;
        if (running != null) {
            running.destroyForcibly();
        }
    }

    private static void waitFor(Process process) {
        try {
            process.waitFor();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    private static void deleteRecursively(Path directory) {
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
        catch (IOException ignored) {
            // A leftover temporary directory is harmless.
        }
    }
}
