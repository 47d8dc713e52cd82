package dev.ratelimiter.core;

import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * What an API key (or a user or tenant id) must look like before the limiter spends anything on it: at least
 * {@code minLength} and at most {@code maxLength} characters and, when a pattern is given, the whole value matching it.
 * A value that does not is refused at once (400), so that junk never reaches the store; the length is checked first, so
 * the pattern never runs on a long input.
 */
public final class ApiKeyFormat {

    /** No check beyond the server's header size limit. */
    public static final ApiKeyFormat ANY = new ApiKeyFormat(0, 0, null);

    private final int minLength;
    private final int maxLength;
    private final Pattern pattern;

    /**
     * The format of {@code ratelimit.api-key.*} without a minimum length.
     *
     * @param maxLength most characters a key may have; 0: no limit of ours
     * @param pattern a regular expression the whole key must match; null or blank: none
     */
    public ApiKeyFormat(int maxLength, String pattern) {
        this(0, maxLength, pattern);
    }

    /**
     * The format of {@code ratelimit.api-key.*}.
     *
     * @param minLength fewest characters a key may have; 0: no minimum
     * @param maxLength most characters a key may have; 0: no limit of ours
     * @param pattern a regular expression the whole key must match; null or blank: none
     */
    public ApiKeyFormat(int minLength, int maxLength, String pattern) {
        this("ratelimit.api-key", minLength, maxLength, pattern);
    }

    /**
     * A format without a minimum length, for the settings under {@code settings}.
     *
     * @param settings the prefix of the {@code max-length} and {@code pattern} settings, named when they are refused
     * @param maxLength most characters a value may have; 0: no limit of ours
     * @param pattern a regular expression the whole value must match; null or blank: none
     */
    public ApiKeyFormat(String settings, int maxLength, String pattern) {
        this(settings, 0, maxLength, pattern);
    }

    /**
     * @param settings the prefix of the {@code min-length}, {@code max-length} and {@code pattern} settings, named
     *                 when they are refused
     * @param minLength fewest characters a value may have; 0: no minimum
     * @param maxLength most characters a value may have; 0: no limit of ours
     * @param pattern a regular expression the whole value must match; null or blank: none
     */
    public ApiKeyFormat(String settings, int minLength, int maxLength, String pattern) {
        if (minLength < 0) {
            throw new IllegalArgumentException(settings + ".min-length must be 0 (no minimum) or more, but was "
                    + minLength);
        }
        if (maxLength < 0) {
            throw new IllegalArgumentException(settings + ".max-length must be 0 (no limit) or more, but was "
                    + maxLength);
        }
        if (maxLength > 0 && minLength > maxLength) {
            throw new IllegalArgumentException(settings + ".min-length (" + minLength + ") is more than "
                    + settings + ".max-length (" + maxLength + "): every value would be refused");
        }
        this.minLength = minLength;
        this.maxLength = maxLength;
        try {
            this.pattern = pattern == null || pattern.isBlank() ? null : Pattern.compile(pattern);
        }
        catch (PatternSyntaxException ex) {
            throw new IllegalArgumentException(settings + ".pattern '" + pattern + "' is not a regular "
                    + "expression: " + ex.getDescription() + " at index " + ex.getIndex());
        }
    }

    /** Why the value is refused by its length alone (longer than the maximum); null when it is fine. */
    public String lengthProblem(String value) {
        return maxLength > 0 && value.length() > maxLength ? "is longer than " + maxLength + " characters" : null;
    }

    /** Why the value is refused, in words for the client (never echoing the value); null when it is fine. */
    public String problem(String apiKey) {
        String tooLong = lengthProblem(apiKey);
        if (tooLong != null) {
            return tooLong;
        }
        if (apiKey.length() < minLength) {
            return "is shorter than " + minLength + " characters";
        }
        if (pattern != null && !pattern.matcher(apiKey).matches()) {
            return "is not in the expected format";
        }
        return null;
    }
}
