package dev.ratelimiter.benchmarks.sidebyside;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Puts processes on cores for a {@link Layout}, with {@code taskset}. What "shared" means is read once, at start: the
 * cores this JVM may run on ({@code Cpus_allowed_list} of {@code /proc/self/status}, which a container's cpuset
 * already narrows). The pinned layout gives the gateway the first of them and everything else the second; it needs
 * {@code taskset} and two such cores, and {@link #pinnedUnavailable()} says why not otherwise.
 */
final class Affinity {

    /** A process to move between layouts: all its threads, and its descendants' (nginx's worker) when asked. */
    record Pinnable(String name, ProcessHandle process, boolean descendants) {
    }

    private final Optional<Path> taskset;
    private final String allowedList;
    private final List<Integer> allowed;

    private Affinity(Optional<Path> taskset, String allowedList) {
        this.taskset = taskset;
        this.allowedList = allowedList;
        this.allowed = allowedList == null ? List.of() : cpus(allowedList);
    }

    static Affinity detect() {
        String list = null;
        try {
            list = Files.readAllLines(Path.of("/proc/self/status")).stream()
                    .filter(line -> line.startsWith("Cpus_allowed_list:"))
                    .map(line -> line.substring("Cpus_allowed_list:".length()).trim()).findFirst().orElse(null);
        }
        catch (IOException | RuntimeException notLinux) {
            // no /proc: no pinning
        }
        return new Affinity(BenchGateway.onPath("taskset"), list);
    }

    /** Why the pinned layout cannot run here, or empty when it can. */
    Optional<String> pinnedUnavailable() {
        if (taskset.isEmpty()) {
            return Optional.of("taskset is not installed (Debian package util-linux)");
        }
        if (allowedList == null) {
            return Optional.of("the cores this process may use cannot be read (no /proc/self/status)");
        }
        if (allowed.size() < 2) {
            return Optional.of("this process may use " + allowed.size() + " core(s) (" + allowedList
                    + "); the pinned layout needs two");
        }
        return Optional.empty();
    }

    /** The core the gateway runs on in the pinned layout. */
    int gatewayCpu() {
        return allowed.get(0);
    }

    /** The core Redis, the upstream, the load and this JVM run on in the pinned layout. */
    int othersCpu() {
        return allowed.get(1);
    }

    /** What goes before the gateway's {@code java}: {@code taskset -c <gateway core>} in the pinned layout. */
    List<String> gatewayLauncher(Layout layout) {
        return layout == Layout.PINNED ? List.of(taskset.orElseThrow().toString(), "-c", Integer.toString(gatewayCpu()))
                : List.of();
    }

    /** What goes before {@code wrk}: {@code taskset -c <others' core>} in the pinned layout. */
    List<String> othersLauncher(Layout layout) {
        return layout == Layout.PINNED ? List.of(taskset.orElseThrow().toString(), "-c", Integer.toString(othersCpu()))
                : List.of();
    }

    /**
     * Moves every thread of {@code processes} (and of their descendants where asked) to the others' core for the
     * pinned layout, or back to all the cores read at start for the shared one; returns what it did, for the report.
     */
    String apply(Layout layout, List<Pinnable> processes) {
        if (taskset.isEmpty() || allowedList == null) {
            return layout == Layout.SHARED ? "no taskset: nothing pinned" : "";
        }
        String cpus = layout == Layout.PINNED ? Integer.toString(othersCpu()) : allowedList;
        List<String> done = new ArrayList<>();
        for (Pinnable pinnable : processes) {
            List<ProcessHandle> all = new ArrayList<>(List.of(pinnable.process()));
            if (pinnable.descendants()) {
                pinnable.process().descendants().forEach(all::add);
            }
            for (ProcessHandle process : all) {
                setAffinity(process.pid(), cpus);
            }
            done.add(pinnable.name() + (all.size() > 1 ? " (pid " + all.stream().map(p -> Long.toString(p.pid()))
                    .collect(Collectors.joining(", ")) + ")" : " (pid " + pinnable.process().pid() + ")"));
        }
        return layout == Layout.PINNED
                ? "gateway on CPU " + gatewayCpu() + "; " + String.join(", ", done) + " and wrk on CPU " + othersCpu()
                : "all processes on CPUs " + allowedList;
    }

    /** {@code taskset -a -p -c <cpus> <pid>}: every thread the process has now; threads it starts later inherit. */
    private void setAffinity(long pid, String cpus) {
        try {
            Process process = new ProcessBuilder(taskset.orElseThrow().toString(), "-a", "-p", "-c", cpus,
                    Long.toString(pid)).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException("taskset -a -p -c " + cpus + " " + pid + " failed: " + output);
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

    /** The cores a thread of {@code pid} may run on ({@code Cpus_allowed_list}), or null when unreadable. */
    static String allowedList(long pid) {
        try (Stream<String> lines = Files.lines(Path.of("/proc", Long.toString(pid), "status"))) {
            return lines.filter(line -> line.startsWith("Cpus_allowed_list:"))
                    .map(line -> line.substring("Cpus_allowed_list:".length()).trim()).findFirst().orElse(null);
        }
        catch (IOException | RuntimeException ex) {
            return null;
        }
    }

    /** A kernel CPU list ({@code 0-3,8,10-11}) as the CPUs in it, in order. */
    static List<Integer> cpus(String list) {
        List<Integer> cpus = new ArrayList<>();
        for (String part : list.trim().split(",")) {
            if (part.isBlank()) {
                continue;
            }
            String[] range = part.trim().split("-", 2);
            int from = Integer.parseInt(range[0].trim());
            int to = range.length > 1 ? Integer.parseInt(range[1].trim()) : from;
            for (int cpu = from; cpu <= to; cpu++) {
                cpus.add(cpu);
            }
        }
        return cpus;
    }

    /**
     * The Redis server's process when it is a process of this machine: its {@code process_id} from {@code INFO
     * server}, if that process is a {@code redis-server} here (a container's id is of its own namespace).
     */
    static Optional<ProcessHandle> localRedis(dev.ratelimiter.testsupport.RedisServer redis) {
        Optional<Long> pid = redis.command("INFO", "server").lines().filter(line -> line.startsWith("process_id:"))
                .map(line -> Long.parseLong(line.substring("process_id:".length()).trim())).findFirst();
        if (pid.isEmpty()) {
            return Optional.empty();
        }
        try {
            String comm = Files.readString(Path.of("/proc", Long.toString(pid.get()), "comm")).trim();
            return comm.startsWith("redis") ? ProcessHandle.of(pid.get()) : Optional.empty();
        }
        catch (IOException | RuntimeException ex) {
            return Optional.empty();
        }
    }
}
