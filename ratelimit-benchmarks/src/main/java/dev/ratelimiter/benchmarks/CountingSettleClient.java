package dev.ratelimiter.benchmarks;

import java.util.List;

import dev.ratelimiter.core.SettleClient;
import reactor.core.publisher.Mono;

/**
 * A settle client that counts what passes through it into a {@link FleetTally}: settles, the bucket reports they
 * carry (the bucket-settles asked of the store), what the store answered for each, and how long each settle took.
 * It changes nothing: the instance settles exactly as through the client it wraps.
 */
final class CountingSettleClient implements SettleClient {

    private final SettleClient client;
    private final FleetTally tally;

    CountingSettleClient(SettleClient client, FleetTally tally) {
        this.client = client;
        this.tally = tally;
    }

    @Override
    public Mono<List<Grant>> settle(List<Report> reports) {
        return Mono.defer(() -> {
            long start = System.nanoTime();
            tally.add(FleetTally.Count.SETTLES, 1);
            tally.add(FleetTally.Count.REPORTS, reports.size());
            return client.settle(reports)
                    .doOnNext(grants -> tally.settled(grants, System.nanoTime() - start))
                    .doOnError(failure -> tally.add(FleetTally.Count.ABANDONED, reports.size()))
                    .doOnCancel(() -> tally.add(FleetTally.Count.ABANDONED, reports.size()));
        });
    }
}
