package dev.ratelimiter.core;

/**
 * Told of every verdict, on the request path: implementations must be quick and must not block (count, enqueue).
 */
@FunctionalInterface
public interface VerdictListener {

    VerdictListener NONE = (request, verdict) -> {
    };

    void onVerdict(RequestAttributes request, Verdict verdict);

    /** A request shed by load shedding in front of {@code upstream} (after its rate-limit verdict, if any). */
    default void onShed(RequestAttributes request, Priority priority, String upstream) {
    }

    /** Tells every one of {@code listeners}, in order. */
    static VerdictListener all(java.util.List<VerdictListener> listeners) {
        if (listeners.isEmpty()) {
            return NONE;
        }
        if (listeners.size() == 1) {
            return listeners.get(0);
        }
        VerdictListener[] each = listeners.toArray(VerdictListener[]::new);
        return new VerdictListener() {

            @Override
            public void onVerdict(RequestAttributes request, Verdict verdict) {
                for (VerdictListener listener : each) {
                    listener.onVerdict(request, verdict);
                }
            }

            @Override
            public void onShed(RequestAttributes request, Priority priority, String upstream) {
                for (VerdictListener listener : each) {
                    listener.onShed(request, priority, upstream);
                }
            }
        };
    }
}
