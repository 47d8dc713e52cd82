package dev.ratelimiter.core;

import java.util.regex.Pattern;

/**
 * Names that operators choose (tiers, route classes, policies) end up in store keys and in HTTP
 * headers, so they are restricted to a charset that is safe in both and refused early otherwise.
 */
public final class PolicyNames {

    private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

    private PolicyNames() {
    }

    public static boolean isValid(String name) {
        return name != null && SAFE.matcher(name).matches();
    }

    /** Returns the name, or refuses it with a message naming {@code setting}. */
    public static String requireValid(String setting, String name) {
        if (!isValid(name)) {
            throw new InvalidLimitException(setting, setting + " has the name '" + name
                    + "', but names must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit.");
        }
        return name;
    }
}
