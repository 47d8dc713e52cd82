package dev.ratelimiter.benchmarks.sidebyside;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The CPU time one process has used so far, user and system, as Linux counts it in {@code /proc/<pid>/stat} (fields
 * 14 and 15, {@code utime} and {@code stime}): the sum over all its threads, those that have exited included, so a
 * JVM's event loops, GC and JIT threads are all in it. Its children are not ({@code cutime}/{@code cstime} only count
 * children waited for, and the gateway has none). The unit is the clock tick ({@code getconf CLK_TCK}, 100 on every
 * Linux this runs on; assumed 100 when {@code getconf} cannot be run, and {@link #tickSource()} says so), so a window
 * of a few seconds at several thousand requests per second resolves a fraction of a microsecond per request.
 *
 * @param micros CPU time so far in microseconds; negative when it cannot be read (no {@code /proc}, process gone)
 */
record ProcessCpu(long micros) {

    private static final long TICKS_PER_SECOND;
    private static final String TICK_SOURCE;

    static {
        long ticks = -1;
        try {
            Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            String output = new String(getconf.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            if (getconf.waitFor(5, TimeUnit.SECONDS) && getconf.exitValue() == 0) {
                ticks = Long.parseLong(output);
            }
        }
        catch (IOException | RuntimeException ex) {
            // no getconf: assumed below
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        TICKS_PER_SECOND = ticks > 0 ? ticks : 100;
        TICK_SOURCE = ticks > 0 ? "CLK_TCK " + ticks + " (getconf)" : "CLK_TCK assumed 100 (getconf not available)";
    }

    /** The process's CPU time now; {@code micros} negative when it cannot be read. */
    static ProcessCpu of(long pid) {
        try {
            long ticks = ticks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
            return new ProcessCpu(ticks * 1_000_000L / TICKS_PER_SECOND);
        }
        catch (IOException | RuntimeException ex) {
            return new ProcessCpu(-1);
        }
    }

    /**
     * {@code utime + stime} in clock ticks from one {@code /proc/<pid>/stat} line. The second field, the command name
     * in parentheses, may itself hold spaces and parentheses ({@code 1234 (a) b) R ...}): the fields are counted from
     * after its last {@code )}, where the third, the state, begins.
     */
    static long ticks(String stat) {
        int end = stat.lastIndexOf(')');
        if (end < 0) {
            throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + stat);
        }
        String[] fields = stat.substring(end + 1).trim().split("\\s+");
        // fields[0] is field 3 (state): utime is field 14, stime field 15
        if (fields.length < 13) {
            throw new IllegalArgumentException("too few fields in /proc/<pid>/stat: " + stat);
        }
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    /** Microseconds used from {@code earlier} to this reading; negative when either could not be read. */
    long since(ProcessCpu earlier) {
        return micros < 0 || earlier.micros < 0 ? -1 : micros - earlier.micros;
    }

    /** Where the tick length came from, for the report. */
    static String tickSource() {
        return TICK_SOURCE;
    }
}
