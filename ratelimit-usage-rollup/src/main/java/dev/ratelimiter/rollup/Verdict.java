package dev.ratelimiter.rollup;

/**
 * The gateway's verdict on one request, as the decision event's {@code verdict} field spells it, and how the rollup
 * counts it: a request the client got through counts as allowed, one it was refused counts as denied.
 */
enum Verdict {

    ALLOWED("allowed", true),
    /** Allowed: a shadow rule would have denied it, but shadow rules only observe. */
    SHADOW_DENIED("shadow_denied", true),
    /** 429 from a rate-limit rule. */
    DENIED("denied", false),
    /** 503: a fail-closed rule could not be checked. The client was still refused. */
    UNAVAILABLE("unavailable", false),
    /** 503: load shedding. The client was still refused. */
    SHED("shed", false),
    /**
     * A verdict this version does not know, or none. Such a decision still happened, so it counts towards the hour's
     * requests, but it is neither allowed nor denied rather than guessed at.
     */
    UNKNOWN("", false);

    private final String wireName;
    private final boolean letThrough;

    Verdict(String wireName, boolean letThrough) {
        this.wireName = wireName;
        this.letThrough = letThrough;
    }

    static Verdict fromWireName(String wireName) {
        if (wireName != null) {
            for (Verdict verdict : values()) {
                if (verdict != UNKNOWN && verdict.wireName.equals(wireName)) {
                    return verdict;
                }
            }
        }
        return UNKNOWN;
    }

    boolean countsAsAllowed() {
        return letThrough;
    }

    boolean countsAsDenied() {
        return this == DENIED || this == UNAVAILABLE || this == SHED;
    }
}
