package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * How long Redis server processes ran and how long they waited for a CPU, as the Linux scheduler counts it
 * ({@code /proc/<pid>/schedstat}). On a machine a saturated gateway shares with its Redis, Redis waits too, and its
 * answers come late for a reason that is no gateway's: a test that measures the gateway's lateness prints this beside
 * it. Unknown (-1) where there is no such file.
 *
 * @param runNanos time on a CPU
 * @param waitNanos time runnable but waiting for a CPU
 * @param slices times it was put on a CPU
 */
public record RedisCpuTime(long runNanos, long waitNanos, long slices) {

    private static final RedisCpuTime UNKNOWN = new RedisCpuTime(-1, -1, -1);

    /** The sum over {@code servers}, which must be running (a paused one does not answer for its process id). */
    public static RedisCpuTime of(List<? extends RedisServer> servers) {
        long run = 0;
        long wait = 0;
        long slices = 0;
        for (RedisServer server : servers) {
            String pid = server.command("INFO", "server").lines().filter(line -> line.startsWith("process_id:"))
                    .map(line -> line.substring("process_id:".length()).trim()).findFirst().orElse(null);
            if (pid == null) {
                return UNKNOWN;
            }
            try {
                String[] stat = Files.readString(Path.of("/proc", pid, "schedstat")).trim().split(" ");
                run += Long.parseLong(stat[0]);
                wait += Long.parseLong(stat[1]);
                slices += Long.parseLong(stat[2]);
            }
            catch (IOException | RuntimeException notLinux) {
                return UNKNOWN;
            }
        }
        return new RedisCpuTime(run, wait, slices);
    }

    /** What happened between {@code earlier} and this. */
    public RedisCpuTime since(RedisCpuTime earlier) {
        return runNanos < 0 || earlier.runNanos < 0 ? UNKNOWN
                : new RedisCpuTime(runNanos - earlier.runNanos, waitNanos - earlier.waitNanos,
                        slices - earlier.slices);
    }

    @Override
    public String toString() {
        return runNanos < 0 ? "unknown"
                : String.format("Redis ran %.2f s and waited %.2f s for a CPU (%.3f ms a wake-up on average)",
                        runNanos / 1e9, waitNanos / 1e9, slices == 0 ? 0 : waitNanos / 1e6 / slices);
    }
}
