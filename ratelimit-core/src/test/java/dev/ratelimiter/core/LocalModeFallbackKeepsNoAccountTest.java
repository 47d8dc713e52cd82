package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Local mode's fallback (its shares not settled for three intervals) keeps no account of what it admits: there is no
 * exact store to charge it to, and a record nobody drains only grows. Found by the attack review of issue 30.
 */
class LocalModeFallbackKeepsNoAccountTest {

    private final long[] now = { 1_000_000_000L };
    private final Rule rule = new Rule("local", "local", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("local.", 10, 1, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
            StoreMode.LOCAL, 1);

    /** Local mode's leases over a store that never settles, deciding from {@code fallback} once the shares are stale. */
    private int admitThroughStaleShares(WithoutStore fallback, int clients) {
        LeaseStore leases = new LeaseStore(reports -> Mono.error(new IllegalStateException("Redis down")), fallback,
                () -> 1, Duration.ofMillis(100), 1_000_000, () -> now[0]);
        now[0] += Duration.ofSeconds(1).toNanos(); // not settled for 10 intervals: stale shares
        int admitted = 0;
        for (int i = 0; i < clients; i++) {
            admitted += leases.decide(List.of(Fixtures.check(rule, "client-" + i))).allowed() ? 1 : 0;
        }
        return admitted;
    }

    @Test
    void localModesFallbackKeepsNoAccountOfWhatItAdmits() {
        // As StoreStack builds local mode's fallback: not charged back.
        WithoutStore fallback = new WithoutStore(new LocalBucketStore(1_000_000, () -> now[0]), () -> 1,
                StoreMetrics.NONE, () -> WithoutStore.SHORTEST_RETRY_AFTER, WithoutStore.DEFAULT_SHARE_FACTOR, false);
        assertThat(admitThroughStaleShares(fallback, 20_000)).isEqualTo(20_000);
        assertThat(fallback.drainOwed()).as("nothing kept for a store nobody will charge").isEmpty();
    }

    @Test
    void exactModesFallbackKeepsWhatItAdmittedToChargeIt() {
        WithoutStore fallback = new WithoutStore(new LocalBucketStore(1_000_000, () -> now[0]), () -> 1,
                StoreMetrics.NONE, () -> WithoutStore.SHORTEST_RETRY_AFTER);
        assertThat(admitThroughStaleShares(fallback, 3)).isEqualTo(3);
        assertThat(fallback.drainOwed()).hasSize(3).allSatisfy(charge -> assertThat(charge.tokens()).isEqualTo(1.0));
    }
}
