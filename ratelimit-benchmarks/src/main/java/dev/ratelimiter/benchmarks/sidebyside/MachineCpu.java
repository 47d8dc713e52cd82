package dev.ratelimiter.benchmarks.sidebyside;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How busy the whole machine was between two readings of {@code /proc/stat} (all cores, every process: gateway,
 * Redis, upstream and load generator). A load level is only meaningful as a share of what the machine can do, and on
 * a shared machine the request rate alone does not say it. {@code NaN} where {@code /proc/stat} does not exist. The
 * part spent in processes of lowered priority ({@code nice}) is told apart: they yield to a benchmark at the normal
 * priority, so a machine they keep busy can still be the benchmark's.
 */
public record MachineCpu(long busy, long nice, long total) {

    private static final Path STAT = Path.of("/proc/stat");

    public static MachineCpu now() {
        try {
            String cpu = Files.readAllLines(STAT).get(0);
            String[] fields = cpu.trim().split("\\s+");
            long total = 0;
            long idle = 0;
            // cpu user nice system idle iowait irq softirq steal ...: idle and iowait are the time nobody ran
            for (int i = 1; i < fields.length && i <= 8; i++) {
                long value = Long.parseLong(fields[i]);
                total += value;
                if (i == 4 || i == 5) {
                    idle += value;
                }
            }
            return new MachineCpu(total - idle, Long.parseLong(fields[2]), total);
        }
        catch (IOException | RuntimeException ex) {
            return new MachineCpu(0, 0, 0);
        }
    }

    /** The busy share, 0–1, from {@code earlier} to this reading. */
    public double busySince(MachineCpu earlier) {
        long elapsed = total - earlier.total;
        return elapsed <= 0 ? Double.NaN : (double) (busy - earlier.busy) / elapsed;
    }

    /** The share, 0–1, spent in processes of lowered priority from {@code earlier} to this reading. */
    public double niceSince(MachineCpu earlier) {
        long elapsed = total - earlier.total;
        return elapsed <= 0 ? Double.NaN : (double) (nice - earlier.nice) / elapsed;
    }
}
