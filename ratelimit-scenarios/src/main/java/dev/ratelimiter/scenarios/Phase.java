package dev.ratelimiter.scenarios;

import java.util.Map;
import java.util.Optional;

/**
 * One stretch of the regions scenario: where the client sends, as requests per second to each region's gateway.
 *
 * @param name for the report, e.g. "us-east-1 only"
 * @param fromSecond when it begins, in seconds from the scenario's start
 * @param seconds how long it lasts
 * @param rates requests per second by region; a region not listed gets none
 */
record Phase(String name, int fromSecond, int seconds, Map<String, Double> rates) {

    int toSecond() {
        return fromSecond + seconds;
    }

    long fromMillis() {
        return fromSecond * 1_000L;
    }

    long toMillis() {
        return toSecond() * 1_000L;
    }

    /** The region all the traffic goes to, when it all goes to one. */
    Optional<String> onlyRegion() {
        return rates.size() == 1 ? Optional.of(rates.keySet().iterator().next()) : Optional.empty();
    }
}
