package dev.ratelimiter.autoconfigure.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

import dev.ratelimiter.core.InvalidLimitException;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;

/**
 * How a configured operator password is read: Spring Security's {@code {id}encoded} convention
 * ({@code {bcrypt}$2a$10$...}, {@code {pbkdf2}...}, every id {@link PasswordEncoderFactories} knows), {@code {noop}}
 * for plain text, and a value without an {@code {id}} as plain text, as before encodings were accepted. Plain text is
 * kept only as a SHA-256 digest and compared in constant time (Spring's own {@code {noop}} compares with
 * {@code equals}, which returns at the first differing character). Spring Security's crypto module is needed only
 * for the encoded ones.
 */
final class OperatorPasswords {

    /** Tried at start-up against every encoded password: a malformed one fails there, not at the first login. */
    private static final String PROBE = "operator-password-probe";

    private OperatorPasswords() {
    }

    /** Whether the value names an encoding ({@code {id}...}), as {@code DelegatingPasswordEncoder} reads it. */
    static boolean namesAnEncoding(String configured) {
        return configured.startsWith("{") && configured.indexOf('}') > 0;
    }

    /** A plain-text password, compared in constant time. */
    static OperatorAccounts.PasswordCheck plain(String password) {
        byte[] digest = sha256(password);
        return offered -> MessageDigest.isEqual(digest, sha256(offered));
    }

    /**
     * An {@code {id}encoded} password; an id no encoder has, or a value its encoder cannot read (a bcrypt hash cut
     * short), fails here with the setting's name - the value itself is never repeated in the message.
     */
    static OperatorAccounts.PasswordCheck encoded(String setting, String configured) {
        String id = configured.substring(1, configured.indexOf('}'));
        try {
            // bcrypt's matches() only logs a malformed hash and answers false; its upgradeEncoding() refuses it
            Encodings.ALL.upgradeEncoding(configured);
            Encodings.ALL.matches(PROBE, configured);
        }
        catch (RuntimeException | LinkageError ex) {
            throw new InvalidLimitException(setting, "The password is given as {" + id + "}..., and that cannot be "
                    + "read: " + reason(id, ex) + " Give it as {bcrypt} followed by a bcrypt hash (htpasswd -bnBC 10 "
                    + "\"\" 'the password' | tr -d ':\\n'), as {noop} followed by the plain text, or as plain text "
                    + "without a {...} prefix.");
        }
        return offered -> Encodings.ALL.matches(offered, configured);
    }

    private static String reason(String id, Throwable ex) {
        if (ex instanceof LinkageError) {
            return "the {" + id + "} encoder needs a library that is not on the classpath (" + ex.getMessage() + ").";
        }
        if (String.valueOf(ex.getMessage()).contains("no password encoder mapped")) {
            return "no password encoder is known by the id '" + id + "' (a plain password that begins with '{' must "
                    + "be written as {noop} followed by it).";
        }
        return "it is not a well-formed {" + id + "} value.";
    }

    /** Made on first use, so that plain-text passwords never need Spring Security's crypto module. */
    private static final class Encodings {

        static final PasswordEncoder ALL = PasswordEncoderFactories.createDelegatingPasswordEncoder();
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("every JVM must provide SHA-256", ex);
        }
    }
}
