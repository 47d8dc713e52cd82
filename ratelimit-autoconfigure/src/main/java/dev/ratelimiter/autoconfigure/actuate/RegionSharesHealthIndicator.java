package dev.ratelimiter.autoconfigure.actuate;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.kafka.RegionShareListener;
import dev.ratelimiter.kafka.RegionUsagePublisher;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The region's shares ({@code regionShares}): whose region this is, how many buckets hold a moved share, whether the
 * shares topic has been read to its end ({@code sharesReadToEnd}) and global buckets are no longer held to the floor
 * ({@code sharesHeldToFloor}), and whether the rebalancer is heard from. Always UP: a region that lost Kafka or the rebalancer keeps limiting on its last
 * shares, which is degraded balance, not a gateway to take out of service.
 */
public final class RegionSharesHealthIndicator implements HealthIndicator {

    private final RegionShares shares;
    private final RegionShareListener listener;
    private final RegionUsagePublisher publisher;
    private final Duration staleAfter;
    private final Clock clock;

    public RegionSharesHealthIndicator(RegionShares shares, RegionShareListener listener,
            RegionUsagePublisher publisher, Duration staleAfter, Clock clock) {
        this.shares = shares;
        this.listener = listener;
        this.publisher = publisher;
        this.staleAfter = staleAfter;
        this.clock = clock;
    }

    @Override
    public Health health() {
        Instant now = clock.instant();
        boolean stale = shares.stale(now, staleAfter);
        Instant heard = shares.lastHeard();
        Health.Builder health = Health.up()
                .withDetail("region", shares.region())
                .withDetail("regions", shares.regions())
                .withDetail("movedBuckets", shares.moved())
                .withDetail("sharesReadToEnd", listener.readToEnd())
                .withDetail("sharesHeldToFloor", listener.heldToFloor())
                .withDetail("readingShares", readingShares())
                .withDetail("sharesStale", stale)
                .withDetail("usageSent", publisher.sent())
                .withDetail("usageFailed", publisher.failed())
                .withDetail("shareRecordsRefused", listener.refused())
                .withDetail("shareRecordsMismatched", listener.mismatched());
        if (heard != null) {
            health.withDetail("rebalancerLastHeard", heard.toString());
        }
        if (stale) {
            health.withDetail("problem", heard == null ? "nothing heard from the rebalancer yet: global rules use the "
                    + "default split" : "nothing heard from the rebalancer since " + heard + ": global rules keep "
                    + "their last shares");
        }
        return health.build();
    }

    /**
     * The detail before {@code sharesReadToEnd}: true once the floor was lifted after the topic was found, a name that
     * reads as "still reading". Kept one release for the scripts that read it; see the operations notes, Upgrading.
     */
    @SuppressWarnings("removal")
    private boolean readingShares() {
        return listener.reading();
    }
}
