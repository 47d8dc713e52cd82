package dev.ratelimiter.autoconfigure;

import java.lang.management.ManagementFactory;

import dev.ratelimiter.autoconfigure.store.InstanceName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How an instance names itself: as configured, else host and pid, with a random part where two must differ. */
class InstanceNameTest {

    private static final String PID = ":" + ManagementFactory.getRuntimeMXBean().getPid();

    @Test
    void aConfiguredNameIsUsedAsItIs() {
        assertThat(InstanceName.configuredOr("gw-7")).isEqualTo("gw-7");
    }

    @Test
    void unconfiguredItIsTheHostAndTheProcessId() {
        assertThat(InstanceName.configuredOr(null)).endsWith(PID).isEqualTo(InstanceName.hostAndPid())
                .doesNotStartWith(":");
    }

    @Test
    void uniqueNamesOfOneProcessDifferInTheirRandomPart() {
        String first = InstanceName.unique();
        String second = InstanceName.unique();

        assertThat(first).startsWith(InstanceName.hostAndPid() + ":").matches(".*:[0-9a-f]+");
        assertThat(second).startsWith(InstanceName.hostAndPid() + ":").isNotEqualTo(first);
    }
}
