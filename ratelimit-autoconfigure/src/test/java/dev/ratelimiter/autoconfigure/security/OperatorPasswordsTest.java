package dev.ratelimiter.autoconfigure.security;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.autoconfigure.OperatorSecurityProperties;
import dev.ratelimiter.core.InvalidLimitException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.security.crypto.bcrypt.BCryptPasswordEncoder;
import org.springframework.security.crypto.password.MessageDigestPasswordEncoder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The operator passwords in Spring Security's encodings, plain text as before, and what a login costs. */
class OperatorPasswordsTest {

    private static final String ADMIN_PASSWORD = "admin-password-1";

    private static final String VIEWER_PASSWORD = "viewer-password-1";

    /** Cost 4, the least bcrypt takes: the test checks the reading, not the hash's strength. */
    private static final String ADMIN_BCRYPT = "{bcrypt}" + new BCryptPasswordEncoder(4).encode(ADMIN_PASSWORD);

    @Test
    void bcryptAndNoopPasswordsLogInAndTheirEncodedFormsDoNot() {
        OperatorAccounts accounts = accounts(ADMIN_BCRYPT, "{noop}" + VIEWER_PASSWORD);
        assertThat(accounts.verify("admin", ADMIN_PASSWORD)).isEqualTo(OperatorAccounts.Role.ADMIN);
        assertThat(accounts.verify("viewer", VIEWER_PASSWORD)).isEqualTo(OperatorAccounts.Role.VIEWER);
        assertThat(accounts.verify("admin", ADMIN_BCRYPT)).as("the hash is not the password").isNull();
        assertThat(accounts.verify("admin", ADMIN_BCRYPT.substring("{bcrypt}".length()))).isNull();
        assertThat(accounts.verify("viewer", "{noop}" + VIEWER_PASSWORD)).as("the id is not the password").isNull();
        assertThat(accounts.verify("viewer", ADMIN_PASSWORD)).isNull();
        assertThat(accounts.verify("admin", VIEWER_PASSWORD)).isNull();
    }

    @Test
    void aPlainValueWorksAsBeforeAndNoopIsHeldToTheSameLength() {
        OperatorAccounts accounts = accounts(ADMIN_PASSWORD, null);
        assertThat(accounts.verify("admin", ADMIN_PASSWORD)).isEqualTo(OperatorAccounts.Role.ADMIN);
        assertThat(accounts.verify("admin", ADMIN_PASSWORD + " ")).isNull();
        InvalidLimitException tooShort = refusal("{noop}short", null);
        assertThat(tooShort.setting()).isEqualTo("ratelimit.management.security.admin.password");
        assertThat(tooShort).hasMessageContaining("at least 12 characters long (this one has 5)");
    }

    /** A legacy digest, because it is quick: the strong ones (pbkdf2, scrypt, argon2) take seconds by design. */
    @Test
    @SuppressWarnings("deprecation")
    void anotherEncodingSpringReadsIsAccepted() {
        String sha256 = "{SHA-256}" + new MessageDigestPasswordEncoder("SHA-256").encode(ADMIN_PASSWORD);
        OperatorAccounts accounts = accounts(sha256, null);
        assertThat(accounts.verify("admin", ADMIN_PASSWORD)).isEqualTo(OperatorAccounts.Role.ADMIN);
        assertThat(accounts.verify("admin", VIEWER_PASSWORD)).isNull();
    }

    @Test
    void anUnknownIdOrAMalformedHashStopsTheStartUpWithTheSettingButNotTheValue() {
        InvalidLimitException unknownId = refusal("{sha999}secret-value-1234", null);
        assertThat(unknownId.setting()).isEqualTo("ratelimit.management.security.admin.password");
        assertThat(unknownId).hasMessageContaining("no password encoder is known by what is between its braces")
                .hasMessageContaining("{noop}").hasMessageNotContaining("secret-value-1234")
                .as("a plain password that begins with {...} is not repeated, not even its first part")
                .hasMessageNotContaining("sha999");
        InvalidLimitException malformed = refusal(ADMIN_PASSWORD, "{bcrypt}$2a$10$cut-short-hash");
        assertThat(malformed.setting()).isEqualTo("ratelimit.management.security.viewer.password");
        assertThat(malformed).hasMessageContaining("not a well-formed {bcrypt} value")
                .hasMessageNotContaining("cut-short-hash");
    }

    /**
     * Values their encoders would only log and answer "no" to, locking the admin out at the first login: refused at
     * start-up instead (found by the issue-34 review: all six were accepted).
     */
    @Test
    void encodedValuesNoEncoderCanReadStopTheStartUp() {
        for (String value : new String[] { "{bcrypt}", "{argon2}not-an-argon2-hash", "{scrypt}x", "{pbkdf2}",
                "{argon2@SpringSecurity_v5_8}garbage", "{scrypt@SpringSecurity_v5_8}y", "{pbkdf2}not-hex",
                "{SHA-256}" }) {
            InvalidLimitException refused = refusal(value, null);
            assertThat(refused).as(value).isNotNull();
            assertThat(refused.setting()).isEqualTo("ratelimit.management.security.admin.password");
            assertThat(refused).as(value).hasMessageContaining("not a well-formed");
        }
    }

    /** Unsalted or broken digests: whoever reads the configuration finds the password; not for the admin. */
    @Test
    void weakDigestsAreRefused() {
        for (String id : new String[] { "MD4", "MD5", "SHA-1", "ldap" }) {
            InvalidLimitException refused = refusal("{" + id + "}5f4dcc3b5aa765d61d8327deb882cf99", null);
            assertThat(refused).as(id).isNotNull();
            assertThat(refused).as(id).hasMessageContaining("unsalted or broken")
                    .hasMessageNotContaining("5f4dcc3b5aa765d61d8327deb882cf99");
        }
    }

    /** An operator's script sends the same credentials with every call: after the first, nothing is hashed. */
    @Test
    void aLoginFoundRightIsRememberedAndHashesNothingAgain() {
        AtomicInteger checks = new AtomicInteger();
        OperatorAccounts accounts = counted(checks);
        assertThat(accounts.verify("admin", ADMIN_PASSWORD)).isEqualTo(OperatorAccounts.Role.ADMIN);
        assertThat(checks.getAndSet(0)).isEqualTo(2);
        for (int i = 0; i < 5; i++) {
            assertThat(accounts.verify("admin", ADMIN_PASSWORD)).isEqualTo(OperatorAccounts.Role.ADMIN);
        }
        assertThat(checks.get()).as("checks for five more calls with the same credentials").isZero();
        assertThat(accounts.verify("admin", ADMIN_PASSWORD + "x")).as("a wrong one is never remembered").isNull();
        assertThat(accounts.verify("viewer", ADMIN_PASSWORD)).as("nor the right password under another name")
                .isNull();
        assertThat(checks.get()).isEqualTo(4);
    }

    /**
     * An anonymous caller cannot make the gateway hash passwords in parallel: while one login is hashed, another
     * waits a bounded time and is then refused without hashing (found by the issue-34 review: every attempt hashed
     * every account, so attempts in parallel took as many cores as they liked).
     */
    @Test
    void whileOneLoginIsHashedAnotherIsRefusedUnhashed() throws Exception {
        AtomicInteger checks = new AtomicInteger();
        CountDownLatch hashing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        OperatorAccounts accounts = OperatorAccounts.of(properties(ADMIN_BCRYPT, "{noop}" + VIEWER_PASSWORD),
                generated -> { }, check -> offered -> {
                    checks.incrementAndGet();
                    hashing.countDown();
                    try {
                        release.await();
                    }
                    catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                    return check.matches(offered);
                });
        CompletableFuture<OperatorAccounts.Role> first = CompletableFuture
                .supplyAsync(() -> accounts.verify("admin", ADMIN_PASSWORD));
        hashing.await();
        int before = checks.get();
        assertThat(accounts.verify("attacker", "guess-number-1")).as("refused while another is hashed").isNull();
        assertThat(checks.get()).as("checks the second attempt made").isEqualTo(before);
        release.countDown();
        assertThat(first.get()).isEqualTo(OperatorAccounts.Role.ADMIN);
    }

    /**
     * Every account's password is checked on every attempt: an unknown name costs the same hashing as a known name
     * with a wrong password, or a right one (counted here, not timed).
     */
    @Test
    void anUnknownNameAndAWrongPasswordCostTheSameWork() {
        AtomicInteger checks = new AtomicInteger();
        OperatorAccounts accounts = counted(checks);
        assertThat(accounts.verify("nobody", ADMIN_PASSWORD)).isNull();
        assertThat(checks.getAndSet(0)).isEqualTo(2);
        assertThat(accounts.verify("admin", "wrong-password-1")).isNull();
        assertThat(checks.getAndSet(0)).isEqualTo(2);
        assertThat(accounts.verify("admin", ADMIN_PASSWORD)).isEqualTo(OperatorAccounts.Role.ADMIN);
        assertThat(checks.getAndSet(0)).isEqualTo(2);
    }

    private static OperatorAccounts counted(AtomicInteger checks) {
        return OperatorAccounts.of(properties(ADMIN_BCRYPT, "{noop}" + VIEWER_PASSWORD), generated -> { },
                check -> offered -> {
                    checks.incrementAndGet();
                    return check.matches(offered);
                });
    }

    private static OperatorAccounts accounts(String admin, @Nullable String viewer) {
        return OperatorAccounts.of(properties(admin, viewer), generated -> {
            throw new AssertionError("no password to generate");
        });
    }

    private static InvalidLimitException refusal(String admin, @Nullable String viewer) {
        return catchThrowableOfType(InvalidLimitException.class, () -> accounts(admin, viewer));
    }

    private static OperatorSecurityProperties properties(String admin, @Nullable String viewer) {
        OperatorSecurityProperties properties = new OperatorSecurityProperties();
        properties.getAdmin().setUsername("admin");
        properties.getAdmin().setPassword(admin);
        properties.getViewer().setUsername("viewer");
        properties.getViewer().setPassword(viewer);
        return properties;
    }
}
