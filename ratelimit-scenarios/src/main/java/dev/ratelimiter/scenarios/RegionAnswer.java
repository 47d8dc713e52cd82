package dev.ratelimiter.scenarios;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One answer to the regions scenario's client: where and when the request was sent, its status, and what the
 * {@code RateLimit-Policy} header said of the global rule — this region's share ({@code q=}) and the region it names.
 *
 * @param region the region the request was sent to
 * @param sentMillis when it was sent, in ms from the scenario's start
 * @param status the HTTP status, or {@link #NO_ANSWER} for a timeout or a connection error
 * @param share the region's share the answer stated, or -1 when it stated none
 * @param namedRegion the region the policy named, or null
 */
record RegionAnswer(String region, long sentMillis, int status, long share, String namedRegion) {

    static final int NO_ANSWER = -1;

    /** A global rule's policy item: {@code "free.default";q=90;w=10;region="us-east-1"}. */
    private static final Pattern GLOBAL_ITEM = Pattern.compile(";q=(\\d+)[^,]*;region=\"([^\"]+)\"");

    static RegionAnswer of(String region, long sentMillis, int status, String policyHeader) {
        Matcher item = GLOBAL_ITEM.matcher(policyHeader == null ? "" : policyHeader);
        if (!item.find()) {
            return new RegionAnswer(region, sentMillis, status, -1, null);
        }
        return new RegionAnswer(region, sentMillis, status, Long.parseLong(item.group(1)), item.group(2));
    }

    static RegionAnswer none(String region, long sentMillis) {
        return new RegionAnswer(region, sentMillis, NO_ANSWER, -1, null);
    }

    boolean admitted() {
        return status == 200;
    }

    boolean refused() {
        return status == 429;
    }
}
