package dev.ratelimiter.autoconfigure.security;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

import dev.ratelimiter.autoconfigure.OperatorSecurityProperties;
import dev.ratelimiter.core.InvalidLimitException;
import org.jspecify.annotations.Nullable;

/**
 * The accounts that may use the operator endpoints, one source for both gateway flavours' Spring Security chains.
 * Every account's password is checked on every attempt, whatever the user name, and the names are compared in
 * constant time: an unknown name and a wrong password cost the same work (a bcrypt hash included), so neither can be
 * told from the other, nor guessed one character at a time, by response times.
 * <p>
 * With a slow encoding ({@code {bcrypt}} and the like, tens of milliseconds of CPU a check), an anonymous caller could
 * make the gateway hash passwords as fast as it sends headers. So at most one login is hashed at a time (another waits
 * up to {@value #HASHING_WAIT_MILLIS} ms, then is refused unhashed), and a login found right is remembered by a digest
 * of its name and password, so that an operator's scripts, which send the same credentials with every call, hash
 * nothing after their first.
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

    /** A configured password, as {@link OperatorPasswords} reads it. */
    @FunctionalInterface
    interface PasswordCheck {

        boolean matches(String offered);

        /** Whether an encoder checks it (bcrypt and the like: tens of milliseconds), not a digest of plain text. */
        default boolean slow() {
            return false;
        }
    }

    /** {@code slow}: of the configured check, before a test's wrapping hides it. */
    private record Account(PasswordCheck name, PasswordCheck password, Role role, boolean slow) {

        static Account of(String name, PasswordCheck password, UnaryOperator<PasswordCheck> observed, Role role) {
            return new Account(OperatorPasswords.plain(name), observed.apply(password), role, password.slow());
        }
    }

    static final long HASHING_WAIT_MILLIS = 500;

    /** Logins remembered at most; more, and the memory starts again (a handful of operators' scripts fit). */
    private static final int REMEMBERED = 32;

    private final List<Account> accounts;
    private final boolean slow;
    private final Semaphore hashing = new Semaphore(1);
    private final Map<String, Role> remembered = new ConcurrentHashMap<>();

    private OperatorAccounts(List<Account> accounts, boolean slow) {
        this.accounts = List.copyOf(accounts);
        this.slow = slow;
    }

    /**
     * The accounts of the settings; an admin without a password gets a random one, handed to {@code generated} once
     * (to be logged: it is the only way to learn it). A password is plain text, or Spring Security's
     * {@code {id}encoded} form ({@code {bcrypt}...}, {@code {noop}...}); one that cannot be read fails here.
     */
    public static OperatorAccounts of(OperatorSecurityProperties properties, Consumer<String> generated) {
        return of(properties, generated, UnaryOperator.identity());
    }

    /** As {@link #of(OperatorSecurityProperties, Consumer)}, each password check wrapped (a test counts the work). */
    static OperatorAccounts of(OperatorSecurityProperties properties, Consumer<String> generated,
            UnaryOperator<PasswordCheck> observed) {
        String prefix = "ratelimit.management.security.";
        OperatorSecurityProperties.Account admin = properties.getAdmin();
        OperatorSecurityProperties.Account viewer = properties.getViewer();
        requireName(prefix + "admin.username", admin.getUsername());
        List<Account> accounts = new ArrayList<>();
        String adminPassword = admin.getPassword();
        PasswordCheck adminCheck;
        if (adminPassword == null || adminPassword.isEmpty()) {
            String random = randomPassword();
            generated.accept(random);
            adminCheck = OperatorPasswords.plain(random);
        }
        else {
            adminCheck = password(prefix + "admin.password", adminPassword);
        }
        accounts.add(Account.of(admin.getUsername(), adminCheck, observed, Role.ADMIN));
        if (viewer.getPassword() != null && !viewer.getPassword().isEmpty()) {
            requireName(prefix + "viewer.username", viewer.getUsername());
            if (viewer.getUsername().equals(admin.getUsername())) {
                throw new InvalidLimitException(prefix + "viewer.username", "The viewer account needs a user name of "
                        + "its own; '" + viewer.getUsername() + "' is the admin's.");
            }
            accounts.add(Account.of(viewer.getUsername(), password(prefix + "viewer.password", viewer.getPassword()),
                    observed, Role.VIEWER));
        }
        return new OperatorAccounts(accounts, accounts.stream().anyMatch(Account::slow));
    }

    /**
     * The role of the account with this name and password, or null; takes the same time whatever the answer (but for
     * a login remembered as right, and one refused unhashed while another is hashed).
     */
    public @Nullable Role verify(String username, String password) {
        if (!slow) {
            return check(username, password);
        }
        String login = OperatorPasswords.fingerprint(username, password);
        Role known = remembered.get(login);
        if (known != null) {
            return known;
        }
        try {
            if (!hashing.tryAcquire(HASHING_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                return null;
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return null;
        }
        try {
            Role found = check(username, password);
            if (found != null) {
                if (remembered.size() >= REMEMBERED) {
                    remembered.clear();
                }
                remembered.put(login, found);
            }
            return found;
        }
        finally {
            hashing.release();
        }
    }

    private @Nullable Role check(String username, String password) {
        Role found = null;
        for (Account account : accounts) {
            // both checks always run, the password's first: its cost never depends on the name
            boolean rightPassword = account.password().matches(password);
            boolean rightName = account.name().matches(username);
            if (rightPassword && rightName && found == null) {
                found = account.role();
            }
        }
        return found;
    }

    /** Plain text (at least {@value #MIN_PASSWORD_LENGTH} characters) or an encoding Spring Security reads. */
    private static PasswordCheck password(String setting, String configured) {
        if (configured.startsWith("{noop}")) {
            String plain = configured.substring("{noop}".length());
            requireStrong(setting, plain);
            return OperatorPasswords.plain(plain);
        }
        if (OperatorPasswords.namesAnEncoding(configured)) {
            return OperatorPasswords.encoded(setting, configured);
        }
        requireStrong(setting, configured);
        return OperatorPasswords.plain(configured);
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
}
