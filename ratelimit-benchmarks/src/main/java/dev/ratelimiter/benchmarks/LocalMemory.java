package dev.ratelimiter.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LeaseStore;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.WithoutStore;

/**
 * Heap per tracked key in this instance's memory: fills a local-mode share store and a local bucket store with
 * {@code keys} distinct clients and divides the retained heap (after full collections) by the count.
 */
public final class LocalMemory {

    private LocalMemory() {
    }

    /** Bytes per key for the share store (local mode) and the bucket store (memory mode and fallback). */
    public static long[] measure(int keys) {
        // Slow refill: no bucket may expire (idle until full) while the measurement runs.
        TokenBucketLimit limit = TokenBucketLimit.of("m.", 100, 1, Duration.ofHours(1));
        Rule localRule = new Rule("m", "m", Match.ANY, List.of(Dimension.API_KEY), limit, 0, Mode.ENFORCE,
                FailureMode.LOCAL, StoreMode.LOCAL, 1);
        String[] clients = new String[keys];
        for (int i = 0; i < keys; i++) {
            clients[i] = ClientIds.unkeyed().of("client-" + i);
        }
        long before = usedAfterGc();
        LeaseStore shares = new LeaseStore(reports -> reactor.core.publisher.Mono.empty(),
                new WithoutStore(new LocalBucketStore(1), () -> 1, StoreMetrics.NONE, () -> Duration.ofSeconds(1)),
                () -> 1, Duration.ofHours(1), keys * 2L, System::nanoTime);
        for (String client : clients) {
            shares.decide(List.of(new Check(localRule, new BucketKey(client, "m"), 1, false)));
        }
        long sharesBytes = (usedAfterGc() - before) / keys;
        long middle = usedAfterGc();
        LocalBucketStore buckets = new LocalBucketStore(keys * 2L);
        for (String client : clients) {
            buckets.evaluateNow(List.of(new Check(localRule, new BucketKey(client, "m"), 1, false)));
        }
        long bucketBytes = (usedAfterGc() - middle) / keys;
        if (shares.size() != keys || buckets.size() != keys) {
            throw new IllegalStateException("expected " + keys + " keys held");
        }
        return new long[] { sharesBytes, bucketBytes };
    }

    private static long usedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
