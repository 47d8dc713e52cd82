package dev.ratelimiter.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The in-memory sink: the last {@code size} decisions, and the clients denied most often recently, for the actuator
 * view. Clients appear by their hashed id only. Denial counts are kept for at most {@code maxClients} clients (the
 * least denied are forgotten first) and halved every {@code decayEvery} events, so "recently" means the last few
 * thousand denials rather than since start.
 */
public final class RecentDecisions implements EventSink {

    private final int size;
    private final int maxClients;
    private final Deque<DecisionEvent> recent;
    private final Map<String, Long> denials = new HashMap<>();
    private long denialsSinceDecay;

    public RecentDecisions(int size, int maxClients) {
        this.size = Math.max(1, size);
        this.maxClients = Math.max(1, maxClients);
        this.recent = new ArrayDeque<>(this.size);
    }

    @Override
    public synchronized void accept(List<DecisionEvent> events) {
        for (DecisionEvent event : events) {
            if (recent.size() == size) {
                recent.removeFirst();
            }
            recent.addLast(event);
            boolean refused = event.verdict() == DecisionEvent.Verdict.DENIED
                    || event.verdict() == DecisionEvent.Verdict.UNAVAILABLE;
            if (refused && event.client() != null) {
                denials.merge(event.client(), 1L, Long::sum);
                if (++denialsSinceDecay >= 10_000) {
                    denials.replaceAll((client, count) -> count / 2);
                    denials.values().removeIf(count -> count == 0);
                    denialsSinceDecay = 0;
                }
                if (denials.size() > maxClients) {
                    forgetLeastDenied();
                }
            }
        }
    }

    private void forgetLeastDenied() {
        List<Map.Entry<String, Long>> entries = new ArrayList<>(denials.entrySet());
        entries.sort(Map.Entry.comparingByValue());
        for (int i = 0; i < entries.size() - maxClients / 2; i++) {
            denials.remove(entries.get(i).getKey());
        }
    }

    /** The latest decisions, newest first. */
    public synchronized List<DecisionEvent> latest(int count) {
        List<DecisionEvent> latest = new ArrayList<>(Math.min(count, recent.size()));
        var newestFirst = recent.descendingIterator();
        while (newestFirst.hasNext() && latest.size() < count) {
            latest.add(newestFirst.next());
        }
        return latest;
    }

    /** Hashed client id → recent denials, most denied first. */
    public synchronized Map<String, Long> mostDenied(int count) {
        Map<String, Long> top = new LinkedHashMap<>();
        denials.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())
                .thenComparing(Map.Entry.comparingByKey())).limit(count)
                .forEach(entry -> top.put(entry.getKey(), entry.getValue()));
        return top;
    }
}
