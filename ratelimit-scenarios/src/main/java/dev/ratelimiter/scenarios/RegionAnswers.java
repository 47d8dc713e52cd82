package dev.ratelimiter.scenarios;

import java.util.List;
import java.util.LongSummaryStatistics;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The regions scenario's answers, in the order sent, and the counts its checks and its chart are made of. Times are
 * when requests were sent (ms from the scenario's start): the gateway decides a few ms later, which no count here
 * would notice.
 */
final class RegionAnswers {

    /** The most admitted in any window, and from when that window ran. */
    record Busiest(long admitted, long fromMillis) {
    }

    private final List<RegionAnswer> answers;

    RegionAnswers(List<RegionAnswer> answersInOrderSent) {
        this.answers = List.copyOf(answersInOrderSent);
    }

    List<RegionAnswer> all() {
        return answers;
    }

    /** How many answers of each status ({@link RegionAnswer#NO_ANSWER} for none). */
    Map<Integer, Long> statuses() {
        Map<Integer, Long> statuses = new TreeMap<>();
        answers.forEach(answer -> statuses.merge(answer.status(), 1L, Long::sum));
        return statuses;
    }

    /** Admitted requests sent in [from, to) ms, to {@code region} or (null) to any. */
    long admitted(String region, long fromMillis, long toMillis) {
        return answers.stream().filter(RegionAnswer::admitted)
                .filter(a -> a.sentMillis() >= fromMillis && a.sentMillis() < toMillis)
                .filter(a -> region == null || a.region().equals(region)).count();
    }

    /** Every window of {@code windowMillis}, wherever it starts (not only on whole seconds), across regions. */
    Busiest busiestWindow(long windowMillis) {
        return busiestWindow(windowMillis, 0, Long.MAX_VALUE);
    }

    /** Likewise, counting only the requests sent in [from, to) ms. */
    Busiest busiestWindow(long windowMillis, long fromMillis, long toMillis) {
        long[] times = answers.stream().filter(RegionAnswer::admitted)
                .filter(a -> a.sentMillis() >= fromMillis && a.sentMillis() < toMillis)
                .mapToLong(RegionAnswer::sentMillis).toArray();
        long most = 0;
        long from = 0;
        // the window that starts at each admitted request holds it and every later one less than a window after it
        for (int first = 0, last = 0; first < times.length; first++) {
            while (last < times.length && times[last] - times[first] < windowMillis) {
                last++;
            }
            if (last - first > most) {
                most = last - first;
                from = times[first];
            }
        }
        return new Busiest(most, from);
    }

    /** When {@code region} first stated a share of at least {@code share} in [from, to) ms. */
    OptionalLong firstShareAtLeast(String region, long share, long fromMillis, long toMillis) {
        return stated(region, fromMillis, toMillis).filter(a -> a.share() >= share).mapToLong(RegionAnswer::sentMillis)
                .findFirst();
    }

    /**
     * From when on every share {@code region} stated in [from, to) ms was within [low, high]; empty when its last
     * one was not.
     */
    OptionalLong settledWithin(String region, long low, long high, long fromMillis, long toMillis) {
        List<RegionAnswer> stretch = stated(region, fromMillis, toMillis).toList();
        int i = stretch.size();
        while (i > 0 && stretch.get(i - 1).share() >= low && stretch.get(i - 1).share() <= high) {
            i--;
        }
        return i == stretch.size() ? OptionalLong.empty() : OptionalLong.of(stretch.get(i).sentMillis());
    }

    /** The least and the most share {@code region} stated in [from, to) ms. */
    LongSummaryStatistics shares(String region, long fromMillis, long toMillis) {
        return stated(region, fromMillis, toMillis).mapToLong(RegionAnswer::share).summaryStatistics();
    }

    /** The share {@code region} first stated in [from, to) ms, or -1. */
    long firstShare(String region, long fromMillis, long toMillis) {
        return stated(region, fromMillis, toMillis).mapToLong(RegionAnswer::share).findFirst().orElse(-1);
    }

    /** The share {@code region} last stated in [from, to) ms, or -1. */
    long lastShare(String region, long fromMillis, long toMillis) {
        return stated(region, fromMillis, toMillis).mapToLong(RegionAnswer::share).reduce((a, b) -> b).orElse(-1);
    }

    /** Answers from {@code region} in [from, to) ms that stated a share. */
    private Stream<RegionAnswer> stated(String region, long fromMillis, long toMillis) {
        return answers.stream().filter(a -> a.region().equals(region) && a.share() >= 0)
                .filter(a -> a.sentMillis() >= fromMillis && a.sentMillis() < toMillis);
    }
}
