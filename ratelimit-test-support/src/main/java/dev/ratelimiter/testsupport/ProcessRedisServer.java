package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A {@code redis-server} child process on a free loopback port, with its own working directory.
 *
 * <p>Persistence is off (no RDB, no AOF), so a restart comes back empty, as a failed-over or replaced
 * cache node would. A shutdown hook kills the process if the test JVM exits without closing it.
 *
 * <p>Cluster nodes and sentinels are the same binary with more on the command line; a {@link CommandLine}
 * adds it. The working directory survives {@link #restart()}, so files the server keeps there (a cluster
 * node's {@code nodes.conf}, a sentinel's rewritten configuration) are read again, as after a real restart.
 */
final class ProcessRedisServer implements RedisServer {

    /**
     * The arguments after the binary's path, given the standard ones (port, bind address, no persistence, log
     * file). Called on every start, so it must not undo what the server wrote into its directory.
     */
    @FunctionalInterface
    interface CommandLine {

        List<String> arguments(Path workingDirectory, List<String> standardOptions);

        /** A plain standalone server. */
        CommandLine STANDALONE = (workingDirectory, standardOptions) -> standardOptions;

        /** The standard options followed by {@code extraOptions} (later options override earlier ones). */
        static CommandLine withOptions(List<String> extraOptions) {
            return (workingDirectory, standardOptions) -> {
                List<String> all = new ArrayList<>(standardOptions);
                all.addAll(extraOptions);
                return all;
            };
        }
    }

    private static final String HOST = LoopbackPorts.HOST;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);
    /**
     * {@code kill} by absolute path when there is one: the embedded binary is tested with a PATH stripped of
     * {@code redis-server}, which usually strips {@code /usr/bin} and {@code /bin} with it.
     */
    private static final String KILL = Stream.of("/bin/kill", "/usr/bin/kill")
            .filter(candidate -> Files.isExecutable(Path.of(candidate))).findFirst().orElse("kill");

    private final Path binary;
    private final String kind;
    private final Path workingDirectory;
    private final int port;
    private final CommandLine commandLine;
    private final Thread killOnExit = new Thread(this::destroyQuietly, "redis-server-reaper");
    private Process process;
    private boolean paused;

    ProcessRedisServer(Path binary, String kind) {
        this(binary, kind, LoopbackPorts.free(), CommandLine.STANDALONE);
    }

    /** Starts the server on {@code port} and waits until it answers PING; on failure nothing is left behind. */
    ProcessRedisServer(Path binary, String kind, int port, CommandLine commandLine) {
        this.binary = binary;
        this.kind = kind;
        this.commandLine = commandLine;
        try {
            this.workingDirectory = Files.createTempDirectory("redis-test-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        this.port = port;
        Runtime.getRuntime().addShutdownHook(killOnExit);
        try {
            start();
        }
        catch (RuntimeException ex) {
            close();
            throw ex;
        }
    }

    /** The server's own directory: logs, and whatever the server writes there. */
    Path workingDirectory() {
        return workingDirectory;
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
        return RedisProtocol.command(HOST, port, arguments);
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
        List<String> standardOptions = List.of(
                "--port", String.valueOf(port),
                "--bind", HOST,
                "--dir", workingDirectory.toString(),
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no",
                "--protected-mode", "no",
                "--logfile", workingDirectory.resolve("redis.log").toString());
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(commandLine.arguments(workingDirectory, standardOptions));
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
        awaitPong(command);
    }

    /** The end of both logs: a bad option is reported on stdout, before the log file is opened. */
    private String logTail() {
        StringBuilder tail = new StringBuilder();
        for (String name : List.of("stdout.log", "redis.log")) {
            try {
                List<String> lines = Files.readAllLines(workingDirectory.resolve(name));
                tail.append(name).append(":\n")
                        .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 10), lines.size())))
                        .append('\n');
            }
            catch (IOException | UncheckedIOException ex) {
                tail.append(name).append(": (unreadable: ").append(ex.getMessage()).append(")\n");
            }
        }
        return tail.toString();
    }

    private void awaitPong(List<String> command) {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        IOException last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                // The log goes into the message: a failed start deletes the directory the log is in.
                throw new IllegalStateException("redis-server exited at start with code " + process.exitValue()
                        + "; " + String.join(" ", command) + "; logs end with:\n" + logTail());
            }
            try {
                if ("PONG".equals(RedisProtocol.send(HOST, port, 500, "PING"))) {
                    return;
                }
            }
            catch (IOException ex) {
                last = ex;
            }
            Await.sleep(20);
        }
        throw new IllegalStateException("redis-server did not answer PING within " + START_TIMEOUT, last);
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder(KILL, signal, String.valueOf(process.pid())).start();
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

    private static void deleteRecursively(Path directory) {
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
        catch (IOException ignored) {
            // A leftover temporary directory is harmless.
        }
    }
}
