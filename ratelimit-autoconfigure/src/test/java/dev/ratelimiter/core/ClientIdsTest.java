package dev.ratelimiter.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ClientIdsTest {

    @ParameterizedTest
    @ValueSource(strings = { "demo", "{tenant}", "a:b:c", "with space", "\u0001\u0007\u001f", "ключ-日本",
            "}{}{", "rl:{victim}:free.default", "\t", "*", "?[a-z]" })
    void anyInputBecomesAFixedLengthKeySafeId(String raw) {
        assertThat(ClientIds.of(raw)).matches("[A-Za-z0-9_-]{22}");
    }

    @Test
    void eightKilobyteInputIsStillShort() {
        assertThat(ClientIds.of("k".repeat(8192))).hasSize(22);
    }

    @Test
    void stableAndDistinct() {
        assertThat(ClientIds.of("demo")).isEqualTo(ClientIds.of("demo"));
        assertThat(ClientIds.of("demo")).isNotEqualTo(ClientIds.of("demo "));
        assertThat(ClientIds.of("demo")).doesNotContain("demo");
    }
}
