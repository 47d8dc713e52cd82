package dev.ratelimiter.benchmarks.sidebyside;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

class ProcessCpuTest {

    /** {@code utime} (field 14) 1500 and {@code stime} (field 15) 250 after a plain command name. */
    @Test
    void utimeAndStimeAreFields14And15() {
        String stat = "4242 (java) S 1 4242 4242 0 -1 4194560 123456 0 12 0 1500 250 7 8 20 0 42 0 100 "
                + "3000000000 50000 18446744073709551615 1 1 0 0 0 0 0 4096 16384 0 0 0 17 1 0 0 0 0 0";

        assertThat(ProcessCpu.ticks(stat)).isEqualTo(1750);
    }

    /** The command name may hold spaces and parentheses; the fields are counted after its last ')'. */
    @Test
    void aCommandNameWithSpacesAndParenthesesDoesNotShiftTheFields() {
        String stat = "77 (a) b (c) d)) R 1 77 77 0 -1 4194560 10 0 0 0 31 9 0 0 20 0 1 0 5 1000 10 "
                + "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";

        assertThat(ProcessCpu.ticks(stat)).isEqualTo(40);
    }

    @Test
    void aLineWithoutCommandNameOrFieldsIsRefused() {
        assertThatThrownBy(() -> ProcessCpu.ticks("4242 java S 1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ProcessCpu.ticks("4242 (java) S 1 2 3")).isInstanceOf(
                IllegalArgumentException.class);
    }

    @Test
    void thisJvmsOwnCpuTimeGrowsWithWork() {
        assumeThat(Files.exists(Path.of("/proc/self/stat"))).as("Linux /proc").isTrue();
        ProcessCpu before = ProcessCpu.of(ProcessHandle.current().pid());
        long sink = 0;
        long until = System.nanoTime() + 300_000_000L;
        while (System.nanoTime() < until) {
            sink += Long.numberOfTrailingZeros(sink + System.nanoTime());
        }
        ProcessCpu after = ProcessCpu.of(ProcessHandle.current().pid());

        assertThat(sink).isNotNegative();
        assertThat(before.micros()).isPositive();
        assertThat(after.since(before)).as("300 ms busy, in ticks of at most 10 ms").isPositive();
        assertThat(ProcessCpu.tickSource()).startsWith("CLK_TCK");
    }

    @Test
    void aProcessThatIsGoneReadsAsUnknown() {
        ProcessCpu gone = ProcessCpu.of(Long.MAX_VALUE);

        assertThat(gone.micros()).isNegative();
        assertThat(gone.since(new ProcessCpu(5))).isNegative();
        assertThat(new ProcessCpu(5).since(gone)).isNegative();
    }
}
