package dev.ratelimiter.benchmarks.sidebyside;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

class AffinityTest {

    @Test
    void kernelCpuListsAreRead() {
        assertThat(Affinity.cpus("0")).containsExactly(0);
        assertThat(Affinity.cpus("0-1")).containsExactly(0, 1);
        assertThat(Affinity.cpus("0-2,5,8-9\n")).containsExactly(0, 1, 2, 5, 8, 9);
    }

    @Test
    void layoutsAreNamed() {
        assertThat(Layout.of("shared")).isEqualTo(Layout.SHARED);
        assertThat(Layout.of("pinned")).isEqualTo(Layout.PINNED);
        assertThat(SideBySide.Options.parse(new String[] { "--layouts=pinned,shared,pinned" }).layouts)
                .containsExactly(Layout.PINNED, Layout.SHARED);
        assertThat(SideBySide.Options.parse(new String[0]).layouts).containsExactly(Layout.SHARED, Layout.PINNED);
    }

    /** A child process (with a child of its own) pinned to the others' core and back, every thread of both. */
    @Test
    void aProcessAndItsDescendantsArePinnedAndReleased() throws Exception {
        Affinity affinity = Affinity.detect();
        assumeThat(affinity.pinnedUnavailable()).as("taskset and two cores").isEmpty();
        String shared = Affinity.allowedList(ProcessHandle.current().pid());
        Process parent = new ProcessBuilder("sh", "-c", "sleep 30 & wait").start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (parent.toHandle().descendants().findAny().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            ProcessHandle child = parent.toHandle().descendants().findFirst().orElseThrow();
            List<Affinity.Pinnable> others = List.of(new Affinity.Pinnable("sh", parent.toHandle(), true));

            String placed = affinity.apply(Layout.PINNED, others);
            assertThat(Affinity.allowedList(parent.pid())).isEqualTo(Integer.toString(affinity.othersCpu()));
            assertThat(Affinity.allowedList(child.pid())).isEqualTo(Integer.toString(affinity.othersCpu()));
            assertThat(placed).contains("gateway on CPU " + affinity.gatewayCpu(), "sh (pid " + parent.pid());
            assertThat(affinity.gatewayLauncher(Layout.PINNED)).endsWith("-c",
                    Integer.toString(affinity.gatewayCpu()));
            assertThat(affinity.othersLauncher(Layout.SHARED)).isEmpty();

            affinity.apply(Layout.SHARED, others);
            assertThat(Affinity.allowedList(parent.pid())).isEqualTo(shared);
            assertThat(Affinity.allowedList(child.pid())).isEqualTo(shared);
        }
        finally {
            parent.toHandle().descendants().forEach(ProcessHandle::destroy);
            parent.destroy();
        }
    }
}
