package dev.ratelimiter.testsupport;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The slot computation without a server; {@link RedisClusterContract} compares it with CLUSTER KEYSLOT. */
class ClusterSlotsTest {

    @Test
    void crc16IsTheXmodemVariantOfTheClusterSpecification() {
        // The check value the Redis Cluster specification gives for its CRC16.
        byte[] bytes = "123456789".getBytes(StandardCharsets.US_ASCII);
        assertThat(ClusterSlots.crc16(bytes, 0, bytes.length)).isEqualTo(0x31C3);
    }

    @Test
    void onlyTheFirstNonEmptyHashTagIsHashed() {
        assertThat(ClusterSlots.slot("{user1000}.following")).isEqualTo(ClusterSlots.slot("user1000"))
                .isEqualTo(ClusterSlots.slot("{user1000}.followers"));
        assertThat(ClusterSlots.slot("foo{bar}{zap}")).isEqualTo(ClusterSlots.slot("bar"));
        assertThat(ClusterSlots.slot("foo{{bar}}zap")).isEqualTo(ClusterSlots.slot("{bar"));
        // An empty tag does not count: the whole key is hashed.
        assertThat(ClusterSlots.slot("foo{}{bar}")).isNotEqualTo(ClusterSlots.slot("bar"));
        assertThat(ClusterSlots.slot("foo{}{bar}")).isBetween(0, ClusterSlots.COUNT - 1);
    }
}
