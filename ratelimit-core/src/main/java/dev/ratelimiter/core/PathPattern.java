package dev.ratelimiter.core;

import java.util.Locale;

/**
 * A path glob as gateways write them: {@code *} matches within one segment, {@code **} any number of whole segments,
 * none included ({@code /api/**} matches {@code /api} and {@code /api/a/b}; {@code /api/**}{@code /orders} matches
 * {@code /api/orders}). Kept here so the core needs no web framework.
 *
 * <p>Matched against the {@linkplain RequestPaths#normalise normalised} request path and ignoring case, so that no
 * spelling of a path that the upstream serves as the same resource slips past its rule: the pattern is normalised
 * the same way ({@code /api/hello/} is {@code /api/hello}).
 *
 * <p>Matching is by segments with the two-pointer wildcard walk (no regular expression): time grows with pattern
 * segments × path segments at worst, where a regular expression for several {@code **} backtracked for seconds on a
 * few kilobytes of path chosen by a client.
 */
final class PathPattern {

    private static final String ANY_SEGMENTS = "**";

    private final String source;
    private final String[] segments;

    PathPattern(String source) {
        this.source = source;
        this.segments = segmentsOf(RequestPaths.normalise(source).toLowerCase(Locale.ROOT));
    }

    boolean matches(String path) {
        if (path == null) {
            return false;
        }
        String[] parts = segmentsOf(path);
        int p = 0;
        int s = 0;
        int starP = -1;
        int starS = -1;
        while (s < parts.length) {
            if (p < segments.length && segments[p].equals(ANY_SEGMENTS)) {
                starP = p++;
                starS = s;
            }
            else if (p < segments.length && segmentMatches(segments[p], parts[s])) {
                p++;
                s++;
            }
            else if (starP >= 0) {
                p = starP + 1;
                s = ++starS;
            }
            else {
                return false;
            }
        }
        while (p < segments.length && segments[p].equals(ANY_SEGMENTS)) {
            p++;
        }
        return p == segments.length;
    }

    /**
     * One segment against a glob (lower case) where {@code *} is any run of characters, ignoring the text's case;
     * the same walk within the segment.
     */
    private static boolean segmentMatches(String glob, String text) {
        if (glob.indexOf('*') < 0) {
            return glob.equalsIgnoreCase(text);
        }
        int g = 0;
        int t = 0;
        int starG = -1;
        int starT = -1;
        while (t < text.length()) {
            if (g < glob.length() && glob.charAt(g) == '*') {
                starG = g++;
                starT = t;
            }
            else if (g < glob.length() && glob.charAt(g) == Character.toLowerCase(text.charAt(t))) {
                g++;
                t++;
            }
            else if (starG >= 0) {
                g = starG + 1;
                t = ++starT;
            }
            else {
                return false;
            }
        }
        while (g < glob.length() && glob.charAt(g) == '*') {
            g++;
        }
        return g == glob.length();
    }

    /** The root "/" is one empty segment: {@code /*} and {@code /**} match it, as their regular expressions did. */
    private static String[] segmentsOf(String normalised) {
        return normalised.substring(normalised.startsWith("/") ? 1 : 0).split("/", -1);
    }

    @Override
    public String toString() {
        return source;
    }
}
