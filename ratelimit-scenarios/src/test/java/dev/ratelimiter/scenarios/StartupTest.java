package dev.ratelimiter.scenarios;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StartupTest {

    private final AtomicInteger closed = new AtomicInteger();

    @Test
    void aStartThatSucceedsKeepsWhatStartedAndReturnsItsValue() {
        assertThat(Startup.orClose(closed::incrementAndGet, () -> 4.2)).isEqualTo(4.2);
        assertThat(closed).hasValue(0);
    }

    @Test
    void aStartThatFailsClosesWhatStartedAndFailsWithTheSameException() {
        IllegalStateException failure = new IllegalStateException("gateway 1 exited");
        assertThatThrownBy(() -> Startup.orClose(closed::incrementAndGet, () -> {
            throw failure;
        })).isSameAs(failure);
        assertThat(closed).hasValue(1);
    }

    @Test
    void anInputOutputFailureClosesWhatStartedAndIsThrownUnchecked() {
        IOException failure = new IOException("no space for the log");
        assertThatThrownBy(() -> Startup.orClose(closed::incrementAndGet, () -> {
            throw failure;
        })).isInstanceOf(UncheckedIOException.class).hasCause(failure);
        assertThat(closed).hasValue(1);
    }
}
