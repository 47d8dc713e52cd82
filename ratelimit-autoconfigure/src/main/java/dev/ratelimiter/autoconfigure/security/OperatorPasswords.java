package dev.ratelimiter.autoconfigure.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

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

    /**
     * What a well-formed value of each salted, slow encoding looks like. Their encoders only log a value they cannot
     * read and answer "no" to every password, which would lock the admin out at the first login instead of stopping
     * the start-up; so the shape is checked here (as each encoder writes it, with its defaults).
     */
    private static final Map<String, Pattern> SHAPES = Map.of(
            "bcrypt", Pattern.compile("\\$2[aby]?\\$\\d\\d\\$[./0-9A-Za-z]{53}"),
            "argon2", Pattern.compile(
                    "\\$argon2(id|i|d)\\$v=\\d+\\$m=\\d+,t=\\d+,p=\\d+\\$[A-Za-z0-9+/=]+\\$[A-Za-z0-9+/=]+"),
            "scrypt", Pattern.compile("\\$[0-9a-fA-F]+\\$[A-Za-z0-9+/=]+\\$[A-Za-z0-9+/=]+"),
            "pbkdf2", Pattern.compile("([0-9a-fA-F]{2}){16,}"));

    /**
     * Unsalted or broken digests Spring Security still reads, for old password stores: not for an account that can
     * change every limit.
     */
    private static final Set<String> WEAK = Set.of("MD4", "MD5", "SHA-1", "ldap");

    /**
     * The ids {@link PasswordEncoderFactories} knows: the only ones a message names (anything else may be a password).
     */
    private static final Set<String> KNOWN = Set.of("bcrypt", "ldap", "MD4", "MD5", "noop", "pbkdf2",
            "pbkdf2@SpringSecurity_v5_8", "scrypt", "scrypt@SpringSecurity_v5_8", "SHA-1", "SHA-256", "sha256",
            "argon2", "argon2@SpringSecurity_v5_8");

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
        String value = configured.substring(configured.indexOf('}') + 1);
        if (WEAK.contains(id)) {
            throw new InvalidLimitException(setting, "The password is given as {" + id + "}..., a digest that is "
                    + "unsalted or broken: whoever reads it can find the password. " + HOW);
        }
        Pattern shape = KNOWN.contains(id) ? SHAPES.get(id.replace("@SpringSecurity_v5_8", "")) : null;
        if (KNOWN.contains(id) && (value.isEmpty() || shape != null && !shape.matcher(value).matches())) {
            throw new InvalidLimitException(setting, "The password is given as {" + id + "}..., and that cannot be "
                    + "read: it is not a well-formed {" + id + "} value. " + HOW);
        }
        try {
            // bcrypt's matches() only logs a malformed hash and answers false; its upgradeEncoding() refuses it
            Encodings.ALL.upgradeEncoding(configured);
            Encodings.ALL.matches(PROBE, configured);
        }
        catch (RuntimeException | LinkageError ex) {
            String given = KNOWN.contains(id) ? "{" + id + "}..." : "a value that begins with {...}";
            throw new InvalidLimitException(setting, "The password is given as " + given + ", and that cannot be "
                    + "read: " + reason(id, ex) + " " + HOW);
        }
        return new OperatorAccounts.PasswordCheck() {

            @Override
            public boolean matches(String offered) {
                return Encodings.ALL.matches(offered, configured);
            }

            @Override
            public boolean slow() {
                return true;
            }
        };
    }

    private static final String HOW = "Give it as {bcrypt} followed by a bcrypt hash (htpasswd -bnBC 10 \"\" 'the "
            + "password' | tr -d ':\\n'), as {noop} followed by the plain text, or as plain text without a {...} "
            + "prefix.";

    private static String reason(String id, Throwable ex) {
        if (!KNOWN.contains(id)) {
            // never the id itself: a plain password that begins with '{' would be repeated into the log
            return "no password encoder is known by what is between its braces (a plain password that begins with "
                    + "'{' must be written as {noop} followed by it).";
        }
        if (ex instanceof LinkageError) {
            return "the {" + id + "} encoder needs a library that is not on the classpath (" + ex.getMessage() + ").";
        }
        return "it is not a well-formed {" + id + "} value.";
    }

    /** Made on first use, so that plain-text passwords never need Spring Security's crypto module. */
    private static final class Encodings {

        static final PasswordEncoder ALL = PasswordEncoderFactories.createDelegatingPasswordEncoder();
    }

    /** A login's name and password as one digest: what {@link OperatorAccounts} remembers of a login found right. */
    static String fingerprint(String username, String password) {
        return Base64.getEncoder().encodeToString(sha256(username + '\u0000' + password));
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
