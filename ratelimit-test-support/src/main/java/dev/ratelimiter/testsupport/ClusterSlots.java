package dev.ratelimiter.testsupport;

import java.nio.charset.StandardCharsets;

/**
 * The hash slot Redis Cluster puts a key in: CRC16 (XMODEM: polynomial 0x1021, initial value 0, no bit
 * reflection) of the key's bytes, or of its hash tag, modulo 16384. Computed here so a test can tell which
 * primary serves a key without a round trip, and checked against {@code CLUSTER KEYSLOT} in the tests.
 */
final class ClusterSlots {

    static final int COUNT = 16_384;

    private ClusterSlots() {
    }

    static int slot(String key) {
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        int start = 0;
        int end = bytes.length;
        // The hash tag is what lies between the first '{' and the first '}' after it, if that is not empty.
        int open = indexOf(bytes, (byte) '{', 0);
        if (open >= 0) {
            int close = indexOf(bytes, (byte) '}', open + 1);
            if (close > open + 1) {
                start = open + 1;
                end = close;
            }
        }
        return crc16(bytes, start, end) % COUNT;
    }

    static int crc16(byte[] bytes, int start, int end) {
        int crc = 0;
        for (int i = start; i < end; i++) {
            crc ^= (bytes[i] & 0xFF) << 8;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
        }
        return crc & 0xFFFF;
    }

    private static int indexOf(byte[] bytes, byte wanted, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        return -1;
    }
}
