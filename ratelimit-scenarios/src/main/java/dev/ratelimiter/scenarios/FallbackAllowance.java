package dev.ratelimiter.scenarios;

import java.util.List;
import java.util.stream.IntStream;

/**
 * How many requests of one client the gateways may admit on top of its quota because they decided without the store
 * for a while, measured, not assumed. An instance whose store call times out (or whose store circuit breaker is open)
 * decides from its own bucket holding the fallback share — the limit ÷ live instances × the share factor (1, the
 * gateways' default), never more than the limit (see {@code WithoutStore}) — while the store's bucket goes on
 * refilling for the other instances. So over
 * {@code t} seconds of fallback an instance may admit a burst of its share and {@code t} seconds of its share's refill
 * more than the store alone would: {@code share × (1 + t)}. {@code t} and the fallback decisions are each gateway's
 * own meters over the phase ({@code ratelimit.fallback.time} and {@code ratelimit.fallback.decisions}, read from its
 * {@code /actuator/prometheus}).
 *
 * @param requests the allowance: admitted requests the fallback may explain, summed over the instances that fell back
 * @param seconds fallback seconds summed over the instances
 * @param decisions fallback decisions summed over the instances (every rule decided without the store counts one)
 * @param fellBack how many instances fell back at all
 * @param instances how many instances there are
 */
record FallbackAllowance(double requests, double seconds, long decisions, int fellBack, int instances) {

    /**
     * Added to each instance's fallback time: the store circuit breaker's time in its open state (1 s by default).
     * The fallback time is the sum of every stretch an instance decided without the store (from its first fallback
     * decision to the next store call that succeeded), and its own bucket refills between stretches too, so a later
     * stretch may start with up to a full burst again: say a stretch of timeouts in a pause, a call that succeeded,
     * then the timeouts that opened the breaker. One more second of the share covers one such gap, whatever
     * {@code t}; rounding {@code t} up to whole seconds instead would cover anything from nothing (at a whole
     * second) to nearly a second of it.
     */
    static final double BREAKER_OPEN_SECONDS = 1.0;

    /** The fallback meters of one gateway: seconds and decisions without the store, so far or over a phase. */
    record Reading(double seconds, long decisions) {

        static final String TIME = "ratelimit_fallback_time_seconds_total";
        static final String DECISIONS = "ratelimit_fallback_decisions_total";

        /** What happened since {@code before}, a reading of the same gateway. */
        Reading since(Reading before) {
            return new Reading(Math.max(0, seconds - before.seconds), Math.max(0, decisions - before.decisions));
        }

        boolean fellBack() {
            return seconds > 0 || decisions > 0;
        }

        /**
         * From the Prometheus text exposition of {@code /actuator/prometheus}: {@value #TIME} and the sum of
         * {@value #DECISIONS} over its tags (the failure modes).
         *
         * @throws IllegalArgumentException when the fallback time is not there: the gateway does not run our limiter
         * with its metrics, and the fallback could not be measured
         */
        static Reading parse(String prometheus) {
            Double seconds = null;
            double decisions = 0;
            for (String line : prometheus.split("\r?\n")) {
                if (line.startsWith("#")) {
                    continue;
                }
                Double time = value(line, TIME);
                if (time != null) {
                    seconds = time;
                }
                Double decided = value(line, DECISIONS);
                if (decided != null) {
                    decisions += decided;
                }
            }
            if (seconds == null) {
                throw new IllegalArgumentException("no " + TIME + " in the gateway's Prometheus metrics");
            }
            return new Reading(seconds, Math.round(decisions));
        }

        /** The sample's value when {@code line} is one of {@code name}, with or without tags; otherwise null. */
        private static Double value(String line, String name) {
            if (!line.startsWith(name) || line.length() == name.length()) {
                return null;
            }
            String rest = line.substring(name.length());
            if (rest.charAt(0) == '{') {
                rest = rest.substring(rest.lastIndexOf('}') + 1);
            }
            else if (rest.charAt(0) != ' ') {
                return null;
            }
            return Double.parseDouble(rest.trim().split("\\s+")[0]);
        }
    }

    /**
     * The gateways' {@code ratelimit.store.fallback-share-factor}: the scenarios run them with the default. (Each
     * stretch is counted as if it started from a full share, as it did before the fallback followed the store's state:
     * a bound, generous now.)
     */
    static final double SHARE_FACTOR = 1.0;

    /** What one instance decides from when the store cannot answer: min(limit, limit ÷ instances × the factor). */
    static double share(long limit, int instances) {
        return Math.min(limit, SHARE_FACTOR * limit / Math.max(1, instances));
    }

    /**
     * The allowance for a client limited to {@code limit} (per second, bursts of as many), given each instance's
     * fallback over the phase: {@code share × (1 + t + }{@link #BREAKER_OPEN_SECONDS}{@code )} for each instance that
     * fell back, nothing for the others.
     */
    static FallbackAllowance of(long limit, List<Reading> phase) {
        double share = share(limit, phase.size());
        double requests = 0;
        double seconds = 0;
        long decisions = 0;
        int fellBack = 0;
        for (Reading instance : phase) {
            if (instance.fellBack()) {
                requests += share * (1 + instance.seconds() + BREAKER_OPEN_SECONDS);
                seconds += instance.seconds();
                decisions += instance.decisions();
                fellBack++;
            }
        }
        return new FallbackAllowance(requests, seconds, decisions, fellBack, phase.size());
    }

    /**
     * The allowance over a phase, from each instance's reading before it and after it (the same instances in the
     * same order).
     */
    static FallbackAllowance over(long limit, List<Reading> before, List<Reading> after) {
        if (before.size() != after.size()) {
            throw new IllegalArgumentException(before.size() + " readings before, " + after.size() + " after");
        }
        return of(limit, IntStream.range(0, after.size()).mapToObj(i -> after.get(i).since(before.get(i))).toList());
    }

    boolean none() {
        return fellBack == 0;
    }

    /**
     * {@code "40 decided from the fallback share: store fell back 1.1 s on 1 of 2 gateways, 37 decisions"}, the words
     * after the allowance in a bound.
     */
    String describe() {
        return Report.f(requests) + " decided from the fallback share: store fell back " + Report.f(seconds) + " s on "
                + fellBack + " of " + instances + " gateways, " + decisions + " decisions";
    }
}
