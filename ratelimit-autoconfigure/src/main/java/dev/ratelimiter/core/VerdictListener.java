package dev.ratelimiter.core;

/**
 * Told of every verdict, on the request path: implementations must be quick and must not block (count, enqueue).
 */
@FunctionalInterface
public interface VerdictListener {

    VerdictListener NONE = (request, verdict) -> {
    };

    void onVerdict(RequestAttributes request, Verdict verdict);
}
