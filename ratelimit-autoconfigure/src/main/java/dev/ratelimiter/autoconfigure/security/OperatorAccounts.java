package dev.ratelimiter.autoconfigure.security;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.function.Consumer;

import dev.ratelimiter.autoconfigure.OperatorSecurityProperties;
import dev.ratelimiter.core.InvalidLimitException;
import org.jspecify.annotations.Nullable;

/**
 * The accounts that may use the actuator endpoints, checked in constant time: every account's digest is compared
 * whatever the user name, so neither the name nor the password can be guessed one character at a time from response
 * times.
 */
public final class OperatorAccounts {

    /** What an account may do. */
    public enum Role {
        /** Every operation, the writes included. */
        ADMIN,
        /** Read operations only. */
        VIEWER;

        /** The Spring Security role name: RATELIMIT_ADMIN, RATELIMIT_VIEWER. */
        public String roleName() {
            return "RATELIMIT_" + name();
        }
    }

    static final int MIN_PASSWORD_LENGTH = 12;

    private record Account(String username, byte[] digest, Role role) {
    }

    private final List<Account> accounts;

    private OperatorAccounts(List<Account> accounts) {
        this.accounts = List.copyOf(accounts);
    }

    /**
     * The accounts of the settings; an admin without a password gets a random one, handed to {@code generated} once
     * (to be logged: it is the only way to learn it).
     */
    public static OperatorAccounts of(OperatorSecurityProperties properties, Consumer<String> generated) {
        String prefix = "ratelimit.management.security.";
        OperatorSecurityProperties.Account admin = properties.getAdmin();
        OperatorSecurityProperties.Account viewer = properties.getViewer();
        requireName(prefix + "admin.username", admin.getUsername());
        List<Account> accounts = new ArrayList<>();
        String adminPassword = admin.getPassword();
        if (adminPassword == null || adminPassword.isEmpty()) {
            adminPassword = randomPassword();
            generated.accept(adminPassword);
        }
        else {
            requireStrong(prefix + "admin.password", adminPassword);
        }
        accounts.add(new Account(admin.getUsername(), digest(admin.getUsername(), adminPassword), Role.ADMIN));
        if (viewer.getPassword() != null && !viewer.getPassword().isEmpty()) {
            requireName(prefix + "viewer.username", viewer.getUsername());
            requireStrong(prefix + "viewer.password", viewer.getPassword());
            if (viewer.getUsername().equals(admin.getUsername())) {
                throw new InvalidLimitException(prefix + "viewer.username", "The viewer account needs a user name of "
                        + "its own; '" + viewer.getUsername() + "' is the admin's.");
            }
            accounts.add(new Account(viewer.getUsername(), digest(viewer.getUsername(), viewer.getPassword()),
                    Role.VIEWER));
        }
        return new OperatorAccounts(accounts);
    }

    /** The role of the account with this name and password, or null; takes the same time whatever the answer. */
    public @Nullable Role verify(String username, String password) {
        byte[] offered = digest(username, password);
        Role found = null;
        for (Account account : accounts) {
            if (MessageDigest.isEqual(account.digest(), offered) && found == null) {
                found = account.role();
            }
        }
        return found;
    }

    private static void requireName(String setting, @Nullable String name) {
        if (name == null || name.isBlank() || name.contains(":")) {
            throw new InvalidLimitException(setting, "An operator user name must be non-blank and without ':' (HTTP "
                    + "Basic separates name and password with it); got '" + name + "'.");
        }
    }

    private static void requireStrong(String setting, String password) {
        if (password.length() < MIN_PASSWORD_LENGTH) {
            throw new InvalidLimitException(setting, "An operator password must be at least " + MIN_PASSWORD_LENGTH
                    + " characters long (this one has " + password.length() + "); whoever has it can change every "
                    + "limit. Leave it unset to get a random one.");
        }
    }

    private static String randomPassword() {
        byte[] random = new byte[24];
        new SecureRandom().nextBytes(random);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    }

    /** The name (length first, so no name/password split collides) is part of the digest: one comparison checks both. */
    private static byte[] digest(String username, String password) {
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            byte[] name = username.getBytes(StandardCharsets.UTF_8);
            sha256.update(ByteBuffer.allocate(Integer.BYTES).putInt(name.length).array());
            sha256.update(name);
            return sha256.digest(password.getBytes(StandardCharsets.UTF_8));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("every JVM must provide SHA-256", ex);
        }
    }
}
