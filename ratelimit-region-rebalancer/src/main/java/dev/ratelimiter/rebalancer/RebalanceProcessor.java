package dev.ratelimiter.rebalancer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.QuotaSplit;
import dev.ratelimiter.core.RegionShares;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * Usage in, shares out. Each usage record updates its bucket's state; every interval (wall-clock) each bucket's
 * target shares are computed ({@link ShareAllocator}) and published in two steps, so that the shares in force across
 * the regions never sum to more than the limit while a change travels:
 * <ol>
 * <li>if any region's share goes down, publish {@code min(current, target)} — regions only shrink — and note when;
 * </li>
 * <li>only when nothing shrinks any more and {@code growDelay} has passed since the last shrink, publish the target.
 * </li>
 * </ol>
 * Every region applies the records of a bucket in order (one partition, mirrored in order). So while every region
 * applies a published record within {@code growDelay} of its publication, the records in force at any moment are one
 * record and possibly the next, each entry of a shrink no larger than the record before it, and of a grow no larger
 * than what the shrink before it left in the regions that grow; the sum of the entries in force is at most the sum of
 * one record, which is at most the limit. A region lagging by more than {@code growDelay} can hold its old, larger
 * share beside another region's grown one: the overshoot is then at most the quota moved, for as long as the lag.
 *
 * <p>A bucket idle for {@code idleAfter} goes back to the default split, published as a tombstone, and its state is
 * dropped: the shares topic holds only active buckets that need more than their default share somewhere.
 */
final class RebalanceProcessor implements Processor<String, String, String, String> {

    static final String STORE = "region-buckets";

    /**
     * A move that would change no region's share by more than this part of the quota is not made. Demand measured per
     * interval varies by a request or two between regions with the same traffic, and every move costs quota: the
     * shrink is in force {@code growDelay} before the grow, so the regions together admit less than the limit
     * meanwhile. Seen without it: even traffic over three regions (6 or 7 requests a second each) moved two or three
     * tokens of a 100 every few seconds and admitted 94 of 100 over a window. Measured that way a region's demand
     * varies by about 7 %; its share, a third of the quota, by about 3 % of the quota.
     */
    static final double DEADBAND = 0.05;

    private static final Logger log = LoggerFactory.getLogger(RebalanceProcessor.class);

    private final RebalancerSettings settings;
    private final ShareAllocator allocator;
    private ProcessorContext<String, String> context;
    private KeyValueStore<String, String> store;
    private long skipped;
    private String clientIds;
    private long mismatches;

    RebalanceProcessor(RebalancerSettings settings) {
        this.settings = settings;
        this.allocator = settings.allocator();
    }

    @Override
    public void init(ProcessorContext<String, String> context) {
        this.context = context;
        this.store = context.getStateStore(STORE);
        context.schedule(settings.interval(), PunctuationType.WALL_CLOCK_TIME, this::rebalance);
    }

    @Override
    public void process(Record<String, String> record) {
        try {
            usage(record.key(), Json.MAPPER.readTree(record.value()), context.currentSystemTimeMs());
        }
        catch (RuntimeException ex) {
            if (skipped++ % 1_000 == 0) {
                log.warn("Skipping a usage record that cannot be used (key {}): {}", record.key(), ex.getMessage());
            }
        }
    }

    private void usage(String key, JsonNode usage, long now) {
        String region = usage.path("region").asString("");
        if (key == null || RegionShares.ruleShapeOf(key) == null || !settings.regions().contains(region)) {
            throw new IllegalArgumentException("no bucket key, or a region not among " + settings.regions());
        }
        if (!settings.fingerprint().equals(usage.path("regions").asString(""))) {
            // Shares computed here and that region's default split would not sum to the limit together.
            throw new IllegalArgumentException("usage under regions " + usage.path("regions").asString("?")
                    + ", but the rebalancer's REGIONS are " + settings.fingerprint());
        }
        noteClientIds(usage.path("ids").asString(""), region);
        long quota = usage.path("quota").asLong(0);
        long windowMs = usage.path("windowMs").asLong(0);
        long intervalMs = usage.path("intervalMs").asLong(0);
        long admitted = usage.path("admitted").asLong(-1);
        long refused = usage.path("refused").asLong(-1);
        if (quota < 1 || windowMs < 1 || intervalMs < 1 || admitted < 0 || refused < 0) {
            throw new IllegalArgumentException("quota, window, interval and counts must be positive numbers");
        }
        BucketShares bucket = load(key);
        if (bucket != null && bucket.previousQuota == quota && bucket.quota != quota) {
            return; // the limit this bucket changed from, reported by a region the change has not reached yet
        }
        if (bucket == null || bucket.quota != quota || bucket.windowMs != windowMs) {
            boolean leftover = bucket != null && (bucket.published != null || bucket.leftover);
            long previous = bucket == null ? 0 : bucket.quota;
            if (bucket != null && bucket.published != null) {
                // The limit changed. Gateways on the new limit put the old record aside; those still on the old one
                // (the change is travelling) must not grow: the old record shrinks to its default split at most.
                retire(key, bucket, now);
            }
            bucket = new BucketShares();
            bucket.quota = quota;
            bucket.windowMs = windowMs;
            bucket.leftover = leftover;
            bucket.previousQuota = previous;
        }
        bucket.rule = usage.path("rule").asString("");
        BucketShares.Report report = bucket.usage.computeIfAbsent(region, r -> new LinkedHashMap<>())
                .computeIfAbsent(usage.path("instance").asString(""), i -> new BucketShares.Report());
        report.rate = (double) (admitted + refused) / intervalMs;
        report.seenAt = now;
        report.share = usage.path("share").asLong(0);
        report.quiet = usage.path("quiet").asBoolean(false);
        report.active = admitted + refused > 0;
        bucket.lastUsage = now;
        save(key, bucket);
    }

    private void rebalance(long now) {
        context.forward(new Record<>(RebalancerTopology.HEARTBEAT, "{\"heartbeat\":" + now + "}", now));
        List<String> keys = new ArrayList<>();
        try (KeyValueIterator<String, String> all = store.all()) {
            all.forEachRemaining(entry -> keys.add(entry.key));
        }
        for (String key : keys) {
            BucketShares bucket = load(key);
            if (bucket == null) {
                continue;
            }
            forgetSilentInstances(bucket, now);
            boolean idle = now - bucket.lastUsage >= settings.idleAfter().toMillis();
            double[] demand = idle ? null : demand(bucket, now);
            // Not idle, yet no demand to go by: an instance that had traffic fell silent (its region's Kafka or
            // mirror is down, or this process just restarted). Hold the shares rather than read silence as no
            // traffic: that region may still be enforcing its share, and growing another beside it would exceed the
            // limit.
            long[] next = !idle && demand == null ? null : step(bucket, demand, now);
            if (next != null) {
                publish(key, bucket, next, now);
            }
            if (idle && bucket.published == null) {
                if (bucket.leftover) {
                    context.forward(new Record<>(key, null, now));
                }
                store.delete(key);
            }
            else {
                save(key, bucket);
            }
        }
    }

    /**
     * Each region's demand in tokens per window, from its instances' latest reports; null when the shares must be
     * held: no report at all, or an instance that still had traffic silent for {@code REPORT_TTL} (lost contact,
     * not idle: an idle instance says so with a report of zeros, a quiet one with a quiet report). An instance
     * silent for {@code IDLE_AFTER} is forgotten.
     */
    double[] demand(BucketShares bucket, long now) {
        List<String> regions = settings.regions();
        double[] demand = new double[regions.size()];
        long ttl = settings.reportTtl().toMillis();
        boolean any = false;
        boolean lost = false;
        for (int i = 0; i < regions.size(); i++) {
            Map<String, BucketShares.Report> reports = bucket.usage.get(regions.get(i));
            if (reports == null) {
                continue;
            }
            for (BucketShares.Report report : reports.values()) {
                any = true;
                lost |= report.active && !report.quiet && now - report.seenAt > ttl;
                demand[i] += report.rate * bucket.windowMs;
            }
        }
        return any && !lost ? demand : null;
    }

    /**
     * Instances silent for {@code IDLE_AFTER} are gone (scaled in, idle, quiet ones re-report well within it) — except
     * one that still had traffic when it fell silent: its region may still enforce the share it reported, so it is
     * kept, holding that share as possibly in force, for {@code FORGET_LOST_AFTER}.
     */
    private void forgetSilentInstances(BucketShares bucket, long now) {
        long idle = settings.idleAfter().toMillis();
        long lost = settings.forgetLostAfter().toMillis();
        bucket.usage.values().forEach(reports -> reports.values().removeIf(report -> now - report.seenAt
                > (report.active && !report.quiet ? lost : idle)));
    }

    /**
     * Whether publishing {@code shares} keeps the limit whatever each region still enforces: the sum over regions of
     * the larger of its new entry and the largest share any of its instances last reported enforcing (a report not
     * yet showing a shrink, or the last word of an instance that fell silent) is within the limit. A region without
     * traffic reports nothing and enforces what it is sent.
     */
    boolean safe(BucketShares bucket, long[] shares) {
        List<String> regions = settings.regions();
        long together = 0;
        for (int i = 0; i < regions.size(); i++) {
            long enforced = 0;
            Map<String, BucketShares.Report> reports = bucket.usage.get(regions.get(i));
            if (reports != null) {
                for (BucketShares.Report report : reports.values()) {
                    if (report.active) {
                        enforced = Math.max(enforced, report.share);
                    }
                }
            }
            together += Math.max(shares[i], enforced);
        }
        return together <= bucket.quota;
    }

    /**
     * The next record to publish for {@code bucket}, or null: a shrink toward the target, else (once the last shrink
     * is {@code growDelay} old, and the regions' reports show it {@link #safe}) the target itself. {@code demand} null: the bucket is idle, its target the default.
     */
    long[] step(BucketShares bucket, double[] demand, long now) {
        long[] defaults = allocator.defaults(bucket.quota);
        long[] target = demand == null ? defaults : allocator.allocate(bucket.quota, demand);
        long[] current = bucket.published != null ? bucket.published : defaults;
        if (demand != null && negligible(current, target, demand, bucket.quota)) {
            return null;
        }
        long[] shrink = QuotaSplit.min(current, target);
        if (!Arrays.equals(shrink, current)) {
            bucket.shrunkAt = now;
            return shrink;
        }
        if (!Arrays.equals(target, current) && now - bucket.shrunkAt >= settings.growDelay().toMillis()
                && safe(bucket, target)) {
            return target;
        }
        return null;
    }

    /**
     * Whether moving from {@code current} to {@code target} is not worth its cost: it changes no share by more than
     * {@link #DEADBAND} of the quota, and staying wastes nothing, because every region the move would shrink uses
     * all it holds. A region holding quota it does not use always gets the move: otherwise a record left by earlier
     * traffic would stay in force beside refusing regions for as long as traffic lasts. Only a whole record
     * qualifies: one shrunk and waiting for its grow sums to less than the quota and must grow, however little.
     */
    private static boolean negligible(long[] current, long[] target, double[] demand, long quota) {
        long tolerance = (long) Math.floor(quota * DEADBAND);
        long sum = 0;
        for (int i = 0; i < current.length; i++) {
            if (Math.abs(target[i] - current[i]) > tolerance || (target[i] < current[i] && demand[i] < current[i])) {
                return false;
            }
            sum += current[i];
        }
        return sum == quota;
    }

    /** A bucket whose limit changed: its last record, shrunk to no more than the old limit's default split. */
    private void retire(String key, BucketShares bucket, long now) {
        long[] shrunk = QuotaSplit.min(bucket.published, allocator.defaults(bucket.quota));
        if (!Arrays.equals(shrunk, bucket.published)) {
            publish(key, bucket, shrunk, now);
        }
    }

    private void noteClientIds(String ids, String region) {
        if (clientIds == null) {
            clientIds = ids;
        }
        else if (!clientIds.equals(ids) && mismatches++ % 1_000 == 0) {
            log.warn("Region {} names buckets under client-id scheme {}, others under {}: a client's buckets differ "
                    + "between regions and are not rebalanced together. Set the same ratelimit.client-id.secret "
                    + "everywhere.", region, ids, clientIds);
        }
    }

    private void publish(String key, BucketShares bucket, long[] shares, long now) {
        bucket.version++;
        if (Arrays.equals(shares, allocator.defaults(bucket.quota))) {
            bucket.published = null;
            context.forward(new Record<>(key, null, now)); // the default split is what no record means
            return;
        }
        bucket.published = shares;
        Map<String, Long> byRegion = new LinkedHashMap<>();
        for (int i = 0; i < shares.length; i++) {
            byRegion.put(settings.regions().get(i), shares[i]);
        }
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("rule", bucket.rule);
        value.put("regions", settings.fingerprint());
        value.put("quota", bucket.quota);
        value.put("shares", byRegion);
        value.put("version", bucket.version);
        value.put("at", now);
        context.forward(new Record<>(key, Json.MAPPER.writeValueAsString(value), now));
    }

    private BucketShares load(String key) {
        String json = store.get(key);
        return json == null ? null : Json.MAPPER.readValue(json, BucketShares.class);
    }

    private void save(String key, BucketShares bucket) {
        store.put(key, Json.MAPPER.writeValueAsString(bucket));
    }
}
