package dev.ratelimiter.core;

import java.time.Instant;

/**
 * One published abuse score of one client, as the rollup or an operator's system wrote it: a score between 0
 * (well-behaved) and 1 (abusive), or a factor chosen directly. Either way it can only lower the client's limits:
 * {@link AbuseScores} maps it to a factor of at most 1 and at least the configured floor.
 *
 * @param score 0 to 1, or {@code null} when the publisher chose the {@code factor} itself
 * @param factor 0 (exclusive) to 1, or {@code null}: the factor taken from {@code score}
 * @param source who published it ({@code rollup}, {@code operator}, a system's name), shown to operators
 * @param at when it was published; the decay runs from there
 * @param expires when it stops applying at all, or {@code null}: it only decays
 */
public record AbuseScore(Double score, Double factor, String source, Instant at, Instant expires) {

    /** Longest source name kept: a name, not a document. */
    static final int LONGEST_SOURCE = 64;

    /** Validates: a record that fails is skipped whole (never half applied). */
    public AbuseScore {
        if (score == null && factor == null) {
            throw new IllegalArgumentException("neither a score nor a factor");
        }
        if (score != null && !(score >= 0 && score <= 1)) { // NaN fails both
            throw new IllegalArgumentException("score " + score + " is not between 0 and 1");
        }
        if (factor != null && !(factor > 0 && factor <= 1)) {
            throw new IllegalArgumentException("factor " + factor + " is not above 0 and at most 1 (a score can "
                    + "only lower a limit)");
        }
        if (at == null) {
            throw new IllegalArgumentException("no publication time");
        }
        source = source == null || source.isBlank() ? "unknown"
                : source.length() > LONGEST_SOURCE ? source.substring(0, LONGEST_SOURCE) : source;
    }
}
