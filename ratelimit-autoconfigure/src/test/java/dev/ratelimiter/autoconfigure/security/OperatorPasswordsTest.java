package dev.ratelimiter.autoconfigure.security;

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
        assertThat(unknownId).hasMessageContaining("no password encoder is known by the id 'sha999'")
                .hasMessageContaining("{noop}").hasMessageNotContaining("secret-value-1234");
        InvalidLimitException malformed = refusal(ADMIN_PASSWORD, "{bcrypt}$2a$10$cut-short-hash");
        assertThat(malformed.setting()).isEqualTo("ratelimit.management.security.viewer.password");
        assertThat(malformed).hasMessageContaining("not a well-formed {bcrypt} value")
                .hasMessageNotContaining("cut-short-hash");
    }

    /**
     * Every account's password is checked on every attempt: an unknown name costs the same hashing as a known name
     * with a wrong password, or a right one (counted here, not timed).
     */
    @Test
    void anUnknownNameAndAWrongPasswordCostTheSameWork() {
        AtomicInteger checks = new AtomicInteger();
        OperatorAccounts accounts = OperatorAccounts.of(properties(ADMIN_BCRYPT, "{noop}" + VIEWER_PASSWORD),
                generated -> { }, check -> offered -> {
                    checks.incrementAndGet();
                    return check.matches(offered);
                });
        assertThat(accounts.verify("nobody", ADMIN_PASSWORD)).isNull();
        assertThat(checks.getAndSet(0)).isEqualTo(2);
        assertThat(accounts.verify("admin", "wrong-password-1")).isNull();
        assertThat(checks.getAndSet(0)).isEqualTo(2);
        assertThat(accounts.verify("admin", ADMIN_PASSWORD)).isEqualTo(OperatorAccounts.Role.ADMIN);
        assertThat(checks.getAndSet(0)).isEqualTo(2);
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
