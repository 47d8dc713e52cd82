package dev.ratelimiter.testsupport;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SharedRedisServerTest {

    @Test
    void everyClassGetsTheSameServerLookingFreshlyStarted() {
        RedisServerExtension first = RedisServerExtension.shared();
        first.beforeAll(null);
        first.command("SET", "left-by-the-first-class", "v");
        String sha = first.command("SCRIPT", "LOAD", "return 1").trim();
        first.afterAll(null);
        assertThat(first.server().isRunning()).as("still running after the class").isTrue();

        RedisServerExtension second = RedisServerExtension.shared();
        second.beforeAll(null);
        assertThat(second.port()).isEqualTo(first.port());
        assertThat(second.command("EXISTS", "left-by-the-first-class")).isEqualTo("0");
        assertThat(second.command("SCRIPT", "EXISTS", sha)).as("no cached scripts").contains("0");
        assertThat(second.command("INFO", "commandstats")).as("statistics reset").doesNotContain("cmdstat_set:");
    }

    @Test
    void faultsAndTheEndAreRefused() {
        RedisServer shared = SharedRedisServer.get();
        assertThatThrownBy(shared::kill).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(shared::pause).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(shared::restart).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(shared::close).isInstanceOf(UnsupportedOperationException.class);
        assertThat(shared.command("PING")).isEqualTo("PONG");
    }
}
