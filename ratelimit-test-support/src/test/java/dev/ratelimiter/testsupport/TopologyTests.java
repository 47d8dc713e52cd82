package dev.ratelimiter.testsupport;

import java.nio.file.Path;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/** Helpers shared by the cluster and sentinel tests. */
final class TopologyTests {

    private TopologyTests() {
    }

    /** Starts a topology with {@code ratelimit.test.redis} set to {@code kind} (path or embedded) just for it. */
    static <T> T startWith(String kind, Supplier<T> start) {
        System.setProperty("ratelimit.test.redis", kind);
        try {
            return start.get();
        }
        finally {
            System.clearProperty("ratelimit.test.redis");
        }
    }

    /** The binary a node runs is the one {@code kind} selects: proves both binaries are exercised. */
    static void assertRunsBinaryOf(String kind, RedisNode node) {
        Path expected = "embedded".equals(kind) ? RedisBinary.embedded() : RedisBinary.onPath().orElseThrow();
        assertThat(Path.of(node.info("server").get("executable"))).isEqualTo(expected);
        if ("embedded".equals(kind)) {
            assertThat(node.info("server").get("redis_version")).startsWith("6.2.");
        }
    }

    /** Polls {@code condition} (replication is asynchronous) and fails with {@code what} after {@code max}. */
    static void eventually(Duration max, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + max.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what + " within " + max).isLessThan(deadline);
            try {
                Thread.sleep(20);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new AssertionError(ex);
            }
        }
    }

    static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }
}
