package dev.ratelimiter.benchmarks.sidebyside;

/**
 * What one load run measured.
 *
 * @param requestsPerSecond completed requests per second
 * @param p50Millis median latency
 * @param p99Millis 99th percentile latency
 * @param nonOk answers other than 200 (429s on the refused path)
 * @param errors requests that got no answer (socket errors, timeouts)
 */
record LoadResult(double requestsPerSecond, double p50Millis, double p99Millis, long requests, long nonOk,
        long errors) {
}
