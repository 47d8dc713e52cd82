package dev.ratelimiter.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import java.util.stream.Stream;

import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClientIdsTest {

    static final String SECRET = "0123456789abcdef0123456789abcdef";

    private final ClientIds unkeyed = ClientIds.unkeyed();
    private final ClientIds keyed = ClientIds.keyed("ratelimit.client-id.secret", SECRET);

    @ParameterizedTest
    @ValueSource(strings = { "demo", "{tenant}", "a:b:c", "with space", "\u0001\u0007\u001f", "ключ-日本",
            "}{}{", "rl:{victim}:free.default", "\t", "*", "?[a-z]" })
    void anyInputBecomesAFixedLengthKeySafeId(String raw) {
        assertThat(unkeyed.of(raw)).matches("[A-Za-z0-9_-]{22}");
        assertThat(keyed.of(raw)).matches("[A-Za-z0-9_-]{22}");
    }

    /** An identity as sent and the secret it is hashed with. */
    record Keyed(String raw, String secret) {
    }

    @TestFactory
    Stream<DynamicTest> everyIdIs22KeySafeCharactersWhateverTheInputAndTheSecret() {
        // Any UTF-16 unit, lone surrogates and NUL included, from empty to header-sized.
        Gen<String> identities = Gen.strings(Gen.anyChar(), 0, 4096);
        Gen<String> secrets = Gen.strings(Gen.anyChar(), 16, 200);
        return Property.forAll(Gen.zip(identities, secrets, Keyed::new)).tries(2000).check(keyed -> {
            assertThat(ClientIds.keyed("s", keyed.secret()).of(keyed.raw())).matches("[A-Za-z0-9_-]{22}");
            assertThat(unkeyed.of(keyed.raw())).matches("[A-Za-z0-9_-]{22}");
        });
    }

    @Test
    void eightKilobyteInputIsStillShort() {
        assertThat(keyed.of("k".repeat(8192))).hasSize(22);
    }

    @Test
    void stableAndDistinct() {
        assertThat(keyed.of("demo")).isEqualTo(keyed.of("demo"))
                .isEqualTo(ClientIds.keyed("another setting", SECRET).of("demo"));
        assertThat(keyed.of("demo")).isNotEqualTo(keyed.of("demo "));
        assertThat(keyed.of("demo")).doesNotContain("demo");
    }

    @Test
    void withoutASecretIdsAreTheSha256PrefixEveryEarlierReleaseWrote() {
        // base64url(first 16 bytes of SHA-256("demo")): an upgrade without a secret keeps every bucket key.
        assertThat(unkeyed.of("demo")).isEqualTo("KpdRbDVLaISM29j1SiJqCg");
        assertThat(unkeyed.scheme()).isEqualTo("sha256");
        assertThat(unkeyed.isKeyed()).isFalse();
    }

    @Test
    void withASecretIdsAreAnHmacSha256PrefixThatTheUnkeyedHashDoesNotGive() {
        // base64url(first 16 bytes of HMAC-SHA256(SECRET, "demo")), computed apart from this code.
        assertThat(keyed.of("demo")).isEqualTo("-dKfHjV8vWbuTNaXirsWzg").isNotEqualTo(unkeyed.of("demo"));
        assertThat(keyed.scheme()).isEqualTo("hmac:a1adbfe7");
        assertThat(keyed.isKeyed()).isTrue();
    }

    @Test
    void twoSecretsGiveTwoIdsAndTwoSchemes() {
        ClientIds other = ClientIds.keyed("s", SECRET.replace('0', '1'));
        assertThat(other.of("acme-key")).isNotEqualTo(keyed.of("acme-key"));
        assertThat(other.scheme()).isNotEqualTo(keyed.scheme()).doesNotContain(SECRET);
    }

    @Test
    void aHashedApiKeyNamesItsScheme() {
        assertThat(keyed.hashed("demo")).hasToString("hmac:a1adbfe7:-dKfHjV8vWbuTNaXirsWzg");
        assertThat(HashedApiKey.parse("hmac:a1adbfe7:-dKfHjV8vWbuTNaXirsWzg")).isEqualTo(keyed.hashed("demo"));
        assertThat(HashedApiKey.parse("sha256:KpdRbDVLaISM29j1SiJqCg")).isEqualTo(unkeyed.hashed("demo"));
        assertThat(HashedApiKey.parse("hmac:a1adbfe7:-dKfHjV8vWbuTNaXirsWz")).as("21 characters").isNull();
        assertThat(HashedApiKey.parse("hmac:A1ADBFE7:-dKfHjV8vWbuTNaXirsWzg")).as("upper-case hex").isNull();
        assertThat(HashedApiKey.looksHashed("hmac:junk")).isTrue();
        assertThat(HashedApiKey.looksHashed("acme-key")).isFalse();
    }

    @Test
    void aSecretShorterThan16BytesIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> ClientIds.keyed("ratelimit.client-id.secret", "short-secret"))
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageStartingWith("ratelimit.client-id.secret is 12 bytes long, but must be at least 16")
                .satisfies(ex -> assertThat(((InvalidLimitException) ex).setting())
                        .isEqualTo("ratelimit.client-id.secret"));
        // Bytes, not characters: eight two-byte characters are enough.
        assertThat(ClientIds.keyed("s", "ключключ").of("demo")).hasSize(22);
    }

    @Test
    void identitiesSharingAMemoSlotEachKeepTheirOwnId() {
        // "Aa" and "BB" (and every concatenation of them) have one String.hashCode, so they share a slot.
        List<String> colliding = List.of("AaAa", "AaBB", "BBAa", "BBBB");
        assertThat(colliding.stream().map(String::hashCode).distinct()).hasSize(1);
        for (int round = 0; round < 3; round++) {
            for (String identity : colliding) {
                assertThat(unkeyed.of(identity)).isEqualTo(sha256Prefix(identity));
            }
        }
    }

    @Test
    void identitiesTooLongToRememberAreHashedEveryTimeToTheSameId() {
        String longKey = "k".repeat(ClientIds.LONGEST_MEMOIZED + 1);
        assertThat(unkeyed.of(longKey)).isEqualTo(unkeyed.of(longKey)).isEqualTo(sha256Prefix(longKey));
    }

    /**
     * Threads asking at once for more identities than the memo has slots, so that slots are overwritten while others
     * read them: every answer must still be that identity's own id.
     */
    @Test
    void concurrentChurnNeverAnswersWithAnotherIdentitysId() throws Exception {
        int identities = ClientIds.MEMO_SLOTS * 3;
        Map<String, String> expected = new HashMap<>();
        for (int i = 0; i < identities; i++) {
            expected.put("key-" + i, sha256Prefix("key-" + i));
        }
        List<String> keys = List.copyOf(expected.keySet());
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            List<Future<Long>> wrong = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long seed = t;
                wrong.add(threads.submit(() -> {
                    Random random = new Random(seed);
                    long mismatches = 0;
                    for (int i = 0; i < 50_000; i++) {
                        String key = keys.get(random.nextInt(keys.size()));
                        mismatches += unkeyed.of(key).equals(expected.get(key)) ? 0 : 1;
                    }
                    return mismatches;
                }));
            }
            for (Future<Long> mismatches : wrong) {
                assertThat(mismatches.get(60, TimeUnit.SECONDS)).isZero();
            }
        }
        finally {
            threads.shutdownNow();
        }
    }

    private static String sha256Prefix(String identity) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(identity.getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 16));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
