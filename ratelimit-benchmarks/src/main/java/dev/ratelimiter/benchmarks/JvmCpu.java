package dev.ratelimiter.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time of this JVM at one moment: the whole process, and each live thread's, so that a window can say where the
 * simulation's CPU went — the drivers (the load itself), the settle timer, the dispatch threads, Lettuce's I/O — and
 * whether the JVM rather than Redis was the bottleneck. What no Java thread shows (GC, JIT) is the process's rest.
 */
record JvmCpu(long processNanos, Map<Long, String> names, Map<Long, Long> threadNanos) {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    static JvmCpu now() {
        Map<Long, String> names = new HashMap<>();
        Map<Long, Long> nanos = new HashMap<>();
        // Names in one call: each call stops the JVM at a safepoint, which takes long on a busy machine.
        for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds(), 0)) {
            long cpu = info == null ? -1 : THREADS.getThreadCpuTime(info.getThreadId());
            if (cpu >= 0) {
                names.put(info.getThreadId(), info.getThreadName());
                nanos.put(info.getThreadId(), cpu);
            }
        }
        long process = ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : -1;
        return new JvmCpu(process, names, nanos);
    }

    /** CPU seconds of the process from {@code earlier} to this reading. */
    double processSecondsSince(JvmCpu earlier) {
        return (processNanos - earlier.processNanos) / 1e9;
    }

    /**
     * CPU seconds since {@code earlier} by thread group: a thread's name without its numbers
     * ({@code lettuce-epollEventLoop-4-1} → {@code lettuce-epollEventLoop}), busiest first.
     */
    Map<String, Double> groupSecondsSince(JvmCpu earlier) {
        Map<String, Double> groups = new TreeMap<>();
        threadNanos.forEach((id, nanos) -> {
            long spent = nanos - earlier.threadNanos.getOrDefault(id, 0L);
            groups.merge(names.get(id).replaceAll("[-#]?\\d+", ""), spent / 1e9, Double::sum);
        });
        return groups;
    }
}
