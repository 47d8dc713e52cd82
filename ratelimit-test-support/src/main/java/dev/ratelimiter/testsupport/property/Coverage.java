package dev.ratelimiter.testsupport.property;

import java.util.Map;
import java.util.TreeMap;

/**
 * What a {@link Property}'s tries were, by class ("IPv4", "refused"…): counted while the property runs, asserted once
 * it has run, so that a generator that stops reaching a class fails the test rather than passing on what it no longer
 * tries.
 */
public final class Coverage {

    private final Map<String, Integer> counts = new TreeMap<>();
    private int total;

    /** Counts one try as of this class. */
    public synchronized void collect(Object label) {
        counts.merge(String.valueOf(label), 1, Integer::sum);
        total++;
    }

    /** How many tries were of this class. */
    public synchronized int count(Object label) {
        return counts.getOrDefault(String.valueOf(label), 0);
    }

    /** The share of the collected tries (0 to 100) that were of this class; 0 when nothing was collected. */
    public synchronized double percent(Object label) {
        return total == 0 ? 0 : 100.0 * count(label) / total;
    }

    public synchronized int total() {
        return total;
    }

    /** Each class with its count and share, e.g. {@code {IPv4=2501 (12.5%), IPv6=…}}. */
    @Override
    public synchronized String toString() {
        StringBuilder text = new StringBuilder("{");
        counts.forEach((label, count) -> text.append(text.length() == 1 ? "" : ", ").append(label).append('=')
                .append(count).append(String.format(" (%.1f%%)", 100.0 * count / total)));
        return text.append('}').toString();
    }
}
