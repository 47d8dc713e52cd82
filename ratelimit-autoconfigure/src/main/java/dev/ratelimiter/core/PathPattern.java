package dev.ratelimiter.core;

import java.util.regex.Pattern;

/**
 * A path glob as gateways write them: {@code *} matches within one segment, {@code **} across segments
 * ({@code /api/**}, {@code /users/*}/orders). Kept here so the core needs no web framework.
 */
final class PathPattern {

    private final String source;
    private final Pattern regex;

    PathPattern(String source) {
        this.source = source;
        StringBuilder regex = new StringBuilder();
        for (int i = 0; i < source.length(); i++) {
            char c = source.charAt(i);
            if (c == '*' && i + 1 < source.length() && source.charAt(i + 1) == '*') {
                regex.append(".*");
                i++;
            }
            else if (c == '*') {
                regex.append("[^/]*");
            }
            else {
                regex.append(Pattern.quote(String.valueOf(c)));
            }
        }
        this.regex = Pattern.compile(regex.toString());
    }

    boolean matches(String path) {
        return path != null && regex.matcher(path).matches();
    }

    @Override
    public String toString() {
        return source;
    }
}
