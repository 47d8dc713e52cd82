package dev.ratelimiter.mvc;

import java.lang.management.ManagementFactory;
import java.lang.management.PlatformManagedObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Samples the virtual threads waiting in one method, and the monitors each holds there, from the JVM's JSON thread
 * dump ({@code HotSpotDiagnosticMXBean.dumpThreads}, Java 21+; its {@code monitorsOwned} from Java 25, reached by
 * reflection since the build compiles for 17). A virtual thread that waits while holding a monitor keeps its carrier
 * on Java 21 to 23 ({@code synchronized} stopped pinning in Java 24), which JFR's pinned event on this JDK cannot
 * show.
 */
final class WaitingVirtualThreads implements AutoCloseable {

    /** One virtual thread seen waiting: its stack and the monitors it held. */
    record Waiting(String threadId, List<String> stack, List<String> monitors) {
    }

    private static final long PAUSE_MILLIS = 25;

    private static final JsonMapper json = JsonMapper.builder().build();

    private final String frame;
    private final Map<String, Waiting> seen = new ConcurrentHashMap<>();
    private final Thread sampler;
    private volatile boolean sampling = true;
    private volatile Exception failure;
    private volatile int mostAtOnce;

    private WaitingVirtualThreads(String frame) {
        this.frame = frame;
        this.sampler = new Thread(this::sample, "waiting-virtual-threads");
    }

    /** Starts sampling, dump after dump, the virtual threads with {@code frame} (e.g. {@code Class.method}) on their stack. */
    static WaitingVirtualThreads sample(String frame) {
        WaitingVirtualThreads sampled = new WaitingVirtualThreads(frame);
        sampled.sampler.setDaemon(true);
        sampled.sampler.start();
        return sampled;
    }

    /** Stops sampling; every thread seen, by thread id. */
    List<Waiting> stop() throws InterruptedException {
        sampling = false;
        sampler.join();
        if (failure != null) {
            throw new IllegalStateException("thread dump failed", failure);
        }
        return new ArrayList<>(seen.values());
    }

    /** The most threads one dump found waiting at once. */
    int mostAtOnce() {
        return mostAtOnce;
    }

    private void sample() {
        while (sampling) {
            try {
                List<Waiting> dumped = dump();
                mostAtOnce = Math.max(mostAtOnce, dumped.size());
                for (Waiting waiting : dumped) {
                    seen.merge(waiting.threadId(), waiting, (first, later) -> later.monitors().isEmpty() ? first : later);
                }
                // A dump stops every thread for a moment: spaced out, they leave the requests' timing mostly alone.
                Thread.sleep(PAUSE_MILLIS);
            }
            catch (Exception ex) {
                failure = ex;
                return;
            }
        }
    }

    private List<Waiting> dump() throws Exception {
        Path file = Files.createTempDirectory("thread-dump").resolve("threads.json");
        try {
            dumpThreads(file);
            List<Waiting> found = new ArrayList<>();
            for (JsonNode container : json.readTree(file.toFile()).path("threadDump").path("threadContainers")) {
                for (JsonNode thread : container.path("threads")) {
                    List<String> stack = new ArrayList<>();
                    thread.path("stack").forEach(line -> stack.add(line.asString()));
                    if (thread.path("virtual").asBoolean() && stack.stream().anyMatch(line -> line.contains(frame))) {
                        List<String> monitors = new ArrayList<>();
                        thread.path("monitorsOwned").forEach(owned -> owned.path("locks")
                                .forEach(lock -> monitors.add(owned.path("depth").asInt() + ": " + lock.asString())));
                        found.add(new Waiting(thread.path("tid").asString(), stack, monitors));
                    }
                }
            }
            return found;
        }
        finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(file.getParent());
        }
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private static void dumpThreads(Path file) throws ReflectiveOperationException {
        Class<?> bean = Class.forName("com.sun.management.HotSpotDiagnosticMXBean");
        Class<? extends Enum> format = (Class<? extends Enum>) Class
                .forName("com.sun.management.HotSpotDiagnosticMXBean$ThreadDumpFormat");
        Object diagnostics = ManagementFactory.getPlatformMXBean((Class<? extends PlatformManagedObject>) bean);
        bean.getMethod("dumpThreads", String.class, format).invoke(diagnostics, file.toString(),
                Enum.valueOf(format, "JSON"));
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
