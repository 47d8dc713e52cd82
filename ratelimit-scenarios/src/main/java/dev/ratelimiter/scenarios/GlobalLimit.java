package dev.ratelimiter.scenarios;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.rebalancer.RebalancerSettings;

/**
 * The regions scenario's one global limit and everything that must agree about it: the gateways' arguments and the
 * rebalancer's settings are both made here, so that the regions, their weights and the limit cannot drift apart. The
 * shares the checks expect are worked out here too, by plain arithmetic rather than by the product's own split, so
 * that a wrong split in the product shows up as a failed check.
 *
 * @param regions every region, sorted by name (the order of the default split's remainders)
 * @param limit tokens per {@code period} for one API key, across all regions
 * @param period the refill period; a bucket also holds at most {@code limit}
 * @param floor the part of the limit every region keeps (the rebalancer's floor)
 */
record GlobalLimit(List<String> regions, long limit, Duration period, double floor) {

    static final String USAGE_TOPIC = "ratelimit.region-usage";
    static final String SHARES_TOPIC = "ratelimit.region-shares";

    /** Three equal regions, 100 per 10 s, 5 % floor: the figures of the feature's own end-to-end test. */
    static GlobalLimit threeRegions() {
        return new GlobalLimit(List.of("ap-southeast-1", "eu-central-1", "us-east-1"), 100, Duration.ofSeconds(10),
                0.05);
    }

    /** What every region keeps however busy the others are: 5 of 100. */
    long floorTokens() {
        return (long) Math.floor(limit * floor);
    }

    /** What one region holds when all the traffic is there: the limit less the other regions' floors (90 of 100). */
    long hotShare() {
        return limit - (regions.size() - 1) * floorTokens();
    }

    /** The largest share one region gains in a move: from its floor to the hot share (85 of 100). */
    long mostMoved() {
        return hotShare() - floorTokens();
    }

    /** Equal weights: the limit split evenly, the units left over one each to the first regions by name (34, 33, 33). */
    long defaultShare(String region) {
        long each = limit / regions.size();
        return each + (regions.indexOf(region) < limit % regions.size() ? 1 : 0);
    }

    /** The default split as the summary shows it: 34/33/33. */
    String defaultSplit() {
        return String.join("/", regions.stream().map(region -> String.valueOf(defaultShare(region))).toList());
    }

    /** The sample gateway's arguments for {@code region}: the limit as a free-tier global rule, shares over Kafka. */
    List<String> gatewayArguments(String region, String bootstrapServers, Duration storeTimeout) {
        List<String> args = new ArrayList<>(List.of("--ratelimit.store.type=redis",
                "--ratelimit.store.timeout=" + storeTimeout.toMillis() + "ms",
                // the scenario's client is a key no tier lists: a free-tier client, not one bucket per address
                "--ratelimit.api-key.unknown.policy=default-tier",
                // one limit on the client: the sample's hourly quota and load shedding would be others
                "--ratelimit.rules.free-hourly.enabled=false", "--ratelimit.shedding.enabled=false",
                "--ratelimit.tiers.free.limits.default.capacity=" + limit,
                "--ratelimit.tiers.free.limits.default.refill-tokens=" + limit,
                "--ratelimit.tiers.free.limits.default.refill-period=" + period.toSeconds() + "s",
                "--ratelimit.tiers.free.limits.default.scope=global", "--ratelimit.regions.local=" + region,
                // usage out every second and stale after 3 s: a shift followed within seconds, not the defaults' 30
                "--ratelimit.regions.usage-interval=1s", "--ratelimit.regions.stale-after=3s",
                "--ratelimit.regions.kafka.bootstrap-servers=" + bootstrapServers));
        regions.forEach(each -> args.add("--ratelimit.regions.weights[" + each + "]=1"));
        return args;
    }

    /** The rebalancer's settings: the same regions and weights, rebalancing every second, growing 2 s after a shrink. */
    RebalancerSettings rebalancerSettings(String bootstrapServers, String applicationId, Path stateDir) {
        Map<String, Double> weights = new LinkedHashMap<>();
        regions.forEach(region -> weights.put(region, 1.0));
        return new RebalancerSettings(bootstrapServers, USAGE_TOPIC, SHARES_TOPIC, applicationId, stateDir.toString(),
                weights, floor, 0.2, Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(60),
                Duration.ofSeconds(3), Duration.ofMinutes(10));
    }
}
