package dev.ratelimiter.testsupport;

import java.io.IOException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedisServersTest {

    private RedisServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        System.clearProperty("ratelimit.test.redis");
    }

    /** Both process kinds must work here: "path" is what CI uses, "embedded" what a JDK-only machine uses. */
    @ParameterizedTest
    @ValueSource(strings = { "path", "embedded" })
    void serverCanBePausedResumedKilledAndRestartedOnTheSamePort(String kind) throws IOException {
        System.setProperty("ratelimit.test.redis", kind);
        server = RedisServers.start();
        int port = server.port();
        assertThat(server.command("SET", "k", "v")).isEqualTo("OK");
        assertThat(server.command("GET", "k")).isEqualTo("v");

        server.pause();
        assertThat(server.isRunning()).isFalse();
        assertThatThrownBy(() -> RedisProtocol.send(server.host(), port, 300, "PING"))
                .isInstanceOf(IOException.class);
        server.resume();
        assertThat(server.command("PING")).isEqualTo("PONG");

        server.kill();
        assertThat(server.isRunning()).isFalse();
        assertThatThrownBy(() -> RedisProtocol.send(server.host(), port, 300, "PING"))
                .isInstanceOf(IOException.class);

        server.restart();
        assertThat(server.port()).isEqualTo(port);
        assertThat(server.command("PING")).isEqualTo("PONG");
        assertThat(server.command("EXISTS", "k")).as("a restarted server comes back empty").isEqualTo("0");
    }

    @ParameterizedTest
    @ValueSource(strings = { "path", "embedded" })
    void killingAPausedServerStillStopsIt(String kind) {
        System.setProperty("ratelimit.test.redis", kind);
        server = RedisServers.start();
        server.pause();
        server.kill();
        assertThat(server.isRunning()).isFalse();
        server.restart();
        assertThat(server.command("PING")).isEqualTo("PONG");
    }
}
