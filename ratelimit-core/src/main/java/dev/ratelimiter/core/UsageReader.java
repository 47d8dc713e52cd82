package dev.ratelimiter.core;

import java.util.List;

import reactor.core.publisher.Mono;

/**
 * Reads buckets without spending from them: what a client has left, for the usage API. A reader never creates a
 * bucket, never extends its lifetime and never changes what it holds, so reading a client's usage however often
 * changes no decision; it applies the same refill arithmetic a decision does, as of the store's clock.
 */
@FunctionalInterface
public interface UsageReader {

    /** One reading per probe, in the order of {@code probes}. */
    Mono<List<BucketReading>> read(List<UsageProbe> probes);
}
