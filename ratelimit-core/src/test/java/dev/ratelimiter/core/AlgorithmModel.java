package dev.ratelimiter.core;

/**
 * The Java model of each algorithm ({@link BucketState}, which local mode and the in-memory store run), opened to
 * tests of other packages that hold the Lua scripts against it.
 */
public final class AlgorithmModel {

    private final Limit limit;
    private final BucketState state;

    private AlgorithmModel(Limit limit, BucketState state) {
        this.limit = limit;
        this.state = state;
    }

    /** A fresh bucket as the store creates it at {@code nowNanos} (a full token bucket, an empty window). */
    public static AlgorithmModel of(Limit limit, long nowNanos) {
        return new AlgorithmModel(limit, BucketState.create(limit, nowNanos));
    }

    /** What the bucket says to {@code cost} at {@code nowNanos}, without changing it. */
    public Step preview(int cost, long nowNanos) {
        BucketState.Preview preview = state.preview(limit, cost, nowNanos);
        return new Step(preview.allowed(), preview.remaining(), preview.newValue(), preview.stamp(),
                preview.previous(), preview);
    }

    /** Spends what the preview allowed. */
    public void commit(Step step) {
        state.commit(step.preview);
    }

    /**
     * One answer of the model.
     *
     * @param newValue token bucket: the tokens left; sliding window: the count in the current window
     * @param stamp token bucket: the refill time (ns); sliding window: the window index
     * @param previous sliding window: the count of the window before
     */
    public record Step(boolean allowed, long remaining, double newValue, long stamp, double previous,
            BucketState.Preview preview) {
    }
}
