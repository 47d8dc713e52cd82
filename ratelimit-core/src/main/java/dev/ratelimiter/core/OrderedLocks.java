package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;

/**
 * Runs an action holding the monitors of several buckets, taken in one fixed order (by bucket key), so that two
 * requests sharing buckets can never deadlock. Used by the in-memory stores to decide a request's buckets all or
 * nothing, as the Redis script does in one step.
 */
final class OrderedLocks {

    private static final Comparator<Check> ORDER = Comparator.comparing((Check c) -> c.bucket().partition())
            .thenComparing(c -> c.bucket().name());

    private OrderedLocks() {
    }

    /** Runs {@code action} holding the monitor of {@code monitors.get(i)} for every check i. */
    static <T> T holding(List<Check> checks, List<?> monitors, Supplier<T> action) {
        if (checks.size() == 1) {
            synchronized (monitors.get(0)) {
                return action.get();
            }
        }
        List<Integer> order = new ArrayList<>(checks.size());
        for (int i = 0; i < checks.size(); i++) {
            order.add(i);
        }
        order.sort(Comparator.comparing(checks::get, ORDER));
        return holding(monitors, order, 0, action);
    }

    private static <T> T holding(List<?> monitors, List<Integer> order, int next, Supplier<T> action) {
        if (next == order.size()) {
            return action.get();
        }
        synchronized (monitors.get(order.get(next))) {
            return holding(monitors, order, next + 1, action);
        }
    }
}
