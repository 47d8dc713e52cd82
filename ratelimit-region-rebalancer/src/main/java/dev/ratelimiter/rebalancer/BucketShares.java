package dev.ratelimiter.rebalancer;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the rebalancer keeps per bucket, in its state store (JSON): the limit, each region's instances' latest usage,
 * and the shares last published. Mutable, touched only by the stream task that owns the bucket.
 */
public final class BucketShares {

    /** One instance's latest report. */
    public static final class Report {

        /** Tokens per millisecond the instance admitted and refused over its last interval. */
        public double rate;

        /** When the rebalancer received it (its own clock: regions' clocks may disagree). */
        public long seenAt;

        /** The share the instance was enforcing: how the rebalancer knows a shrink has been applied. */
        public long share;

        /** Reported as quiet: the instance will not report again while it stays so; the report stands. */
        public boolean quiet;

        /** Whether the instance still had traffic: silence after that is lost contact, not idleness. */
        public boolean active;
    }

    public String rule;

    public long quota;

    public long windowMs;

    /** Region → instance → latest report. */
    public Map<String, Map<String, Report>> usage = new LinkedHashMap<>();

    /** The shares last published, in region order; null while the bucket is on the default split. */
    public long[] published;

    /** When a shrink was last published: growing waits for it to have reached every region. */
    public long shrunkAt;

    /** When any usage of the bucket was last received. */
    public long lastUsage;

    /** Incremented by each publication, so a reader can tell records apart. */
    public long version;

    /** The limit before the last change: reports of it (regions the change has not reached) are ignored. */
    public long previousQuota;

    /** A record of an earlier limit of this bucket is on the topic: to be removed when the bucket leaves. */
    public boolean leftover;
}
