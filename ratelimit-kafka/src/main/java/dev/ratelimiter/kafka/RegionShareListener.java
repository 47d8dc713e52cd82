package dev.ratelimiter.kafka;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.Scope;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads the shares topic from its beginning (it is compacted: the last shares of every moved bucket) and applies
 * each record to this region's {@link RegionShares}, on a thread of its own. Every instance reads all partitions
 * itself, without a consumer group: each needs every share. When Kafka is away it keeps trying; the shares it has
 * stay in force, and {@link RegionShares#stale} says so once the rebalancer's heartbeat is overdue.
 *
 * <p>A record that cannot be read, whose shares sum to more than its limit, whose key is no bucket key, or that is
 * stamped later than {@link #MAX_CLOCK_SKEW} from now is skipped and counted: a corrupt or forged record must never
 * raise a region above its share, nor hold off the records after it. A record for a bucket that no global rule in
 * force here makes with that limit waits, among fewer, for its rule (see {@link RegionShares}). What a writer of the
 * topic can still do is move quota within a limit — the topic's ACLs are the control against that.
 */
public final class RegionShareListener implements AutoCloseable {

    /** The key of the rebalancer's heartbeat record (share keys always contain a '/'). */
    public static final String HEARTBEAT = "heartbeat";

    /**
     * How far ahead of this instance's clock a record may be stamped (the rebalancer's clock and this one differ a
     * little). A record stamped further ahead is refused: applied, it would make every later record of its bucket a
     * replay until that time; this bounds how long a forged stamp can hold off the rebalancer's records.
     */
    public static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(1);

    private static final Logger logger = LoggerFactory.getLogger(RegionShareListener.class);
    private static final JsonMapper json = JsonMapper.builder().build();

    private final Supplier<Consumer<String, String>> consumers;
    private volatile Consumer<String, String> consumer;
    private Map<TopicPartition, Long> endOffsets;
    private final long startedNanos = System.nanoTime();
    private final String topic;
    private final RegionShares shares;
    private final Supplier<RuleSet> rules;
    private final Duration staleAfter;
    private final Clock clock;
    private final Thread thread;
    private final AtomicLong applied = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong mismatched = new AtomicLong();
    private volatile boolean running = true;
    private volatile boolean assigned;
    private volatile boolean readToEnd;
    private boolean failing;

    /**
     * @param consumers makes the consumer, on the listener's thread (a Kafka that cannot be resolved must not stop
     * the start-up)
     * @param rules the rules in force, which say which buckets a record can be used for
     * @param floor what a bucket holds until the topic has been read to its end, or {@code staleAfter} has passed
     */
    public RegionShareListener(Supplier<Consumer<String, String>> consumers, String topic, RegionShares shares,
            Supplier<RuleSet> rules, double floor, Duration staleAfter, Clock clock) {
        this.consumers = consumers;
        shares.awaitShares(floor);
        this.topic = topic;
        this.shares = shares;
        this.rules = rules;
        this.staleAfter = staleAfter;
        this.clock = clock;
        this.thread = new Thread(this::run, "ratelimit-region-shares");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    private void run() {
        while (running) {
            try {
                giveUpWaitingAfterStaleAfter();
                if (consumer == null) {
                    consumer = consumers.get();
                }
                if (!assigned) {
                    assign();
                }
                else {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                        apply(record.key(), record.value());
                    }
                    noteCaughtUp();
                }
            }
            catch (org.apache.kafka.common.errors.WakeupException | org.apache.kafka.common.errors.InterruptException ex) {
                return;
            }
            catch (RuntimeException ex) {
                if (!failing) {
                    failing = true; // once per outage, not every second
                    logger.warn("Region shares cannot be read from Kafka (topic {}): {}; the shares in force stay",
                            topic, ex.toString());
                }
                pause();
                continue;
            }
            failing = false;
        }
    }

    private void assign() {
        var partitions = consumer.partitionsFor(topic, Duration.ofSeconds(5));
        if (partitions == null || partitions.isEmpty()) {
            // No topic: no shares were ever published (no rebalancer yet), so the default split is right.
            if (shares.awaitingShares()) {
                shares.sharesRead();
                logger.warn("The region shares topic {} does not exist: global rules use the default split until it "
                        + "does (create it with cleanup.policy=compact)", topic);
            }
            pause();
            return;
        }
        List<TopicPartition> all = partitions.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
        consumer.assign(all);
        consumer.seekToBeginning(all);
        endOffsets = consumer.endOffsets(all, Duration.ofSeconds(5));
        assigned = true;
        logger.info("Reading region shares from {} ({} partitions)", topic, all.size());
    }

    /** Read up to where the topic ended when it was assigned: the shares in force are known. */
    private void noteCaughtUp() {
        if (!shares.awaitingShares() || endOffsets == null) {
            return;
        }
        for (Map.Entry<TopicPartition, Long> end : endOffsets.entrySet()) {
            if (consumer.position(end.getKey(), Duration.ofSeconds(1)) < end.getValue()) {
                return;
            }
        }
        readToEnd = true;
        shares.sharesRead();
        logger.info("Region shares read: {} buckets hold a moved share here", shares.moved());
    }

    private void giveUpWaitingAfterStaleAfter() {
        if (shares.awaitingShares() && System.nanoTime() - startedNanos > staleAfter.toNanos()) {
            shares.sharesRead();
            logger.warn("The region shares topic {} could not be read within {}: global rules use the default split "
                    + "until its shares arrive", topic, staleAfter);
        }
    }

    private void pause() {
        try {
            Thread.sleep(1_000);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /** Applies one record of the shares topic; visible for tests of the record format. */
    public void apply(String key, String value) {
        if (key == null) {
            refused.incrementAndGet();
            return;
        }
        if (value == null) {
            shares.apply(key, 0, null); // a tombstone: back to the default split
            applied.incrementAndGet();
            return;
        }
        try {
            JsonNode record = json.readTree(value);
            Instant now = clock.instant();
            if (HEARTBEAT.equals(key)) {
                Instant at = Instant.ofEpochMilli(record.path("heartbeat").asLong(0));
                // A heartbeat read back from the topic's beginning says nothing about now.
                if (at.plus(staleAfter).isAfter(now)) {
                    shares.heard(now);
                }
                return;
            }
            String ruleShape = RegionShares.ruleShapeOf(key);
            if (ruleShape == null) {
                throw new IllegalArgumentException("not the key of a bucket");
            }
            long quota = record.path("quota").asLong(0);
            boolean otherSettings = !shares.fingerprint().equals(record.path("regions").asString(""));
            Map<String, Long> amounts = new HashMap<>();
            long sum = 0;
            for (var entry : record.path("shares").properties()) {
                JsonNode amount = entry.getValue();
                if (!amount.isIntegralNumber() || !amount.canConvertToLong() || amount.asLong() < 1) {
                    throw new IllegalArgumentException("the share of " + entry.getKey() + " is not a whole number "
                            + "of at least 1");
                }
                amounts.put(entry.getKey(), amount.asLong());
                sum = Math.addExact(sum, amount.asLong());
            }
            // Every region, each at least 1: a region left out (or at 0) would be on its default split beside the
            // others' moved shares, which together can exceed the limit.
            if (!amounts.keySet().equals(new java.util.HashSet<>(shares.regions()))) {
                throw new IllegalArgumentException("shares for " + amounts.keySet() + ", not for every region of "
                        + shares.regions());
            }
            if (quota < 1 || sum > quota) {
                throw new IllegalArgumentException("shares sum to " + sum + " of a limit of " + quota);
            }
            long at = record.path("at").asLong(0);
            if (at > now.plus(MAX_CLOCK_SKEW).toEpochMilli()) {
                throw new IllegalArgumentException("published at " + at + ", more than " + MAX_CLOCK_SKEW
                        + " ahead of this instance's clock (" + now.toEpochMilli() + ")");
            }
            long last = shares.publishedAt(key);
            if (at < last) {
                throw new IllegalArgumentException("published at " + at + ", before the record in force (" + last
                        + "): a replay");
            }
            if (otherSettings) {
                // Shares made under other regions or weights: this region's default split and them need not sum to
                // the limit. A shrink still applies; nothing above this region's default split does.
                mismatched.incrementAndGet();
                logger.warn("Region shares of {} were made for regions {}, this region has {}: applying no more than "
                        + "the default split. Make ratelimit.regions.weights and the rebalancer's REGIONS the same.",
                        key, record.path("regions").asString("?"), shares.fingerprint());
                amounts.computeIfPresent(shares.region(), (region, amount) -> Math.min(amount,
                        shares.defaultShare(quota)));
            }
            shares.apply(key, quota, amounts, at, usableNow(ruleShape, quota));
            applied.incrementAndGet();
        }
        catch (RuntimeException ex) {
            if (refused.incrementAndGet() % 1_000 == 1) {
                logger.warn("Skipped a region share record that cannot be used (key {}): {}", key, ex.getMessage());
            }
        }
    }

    /**
     * Whether a global rule in force here makes buckets named {@code ruleShape} with a limit of {@code quota}, so that
     * the record's shares, which sum to at most {@code quota}, sum to at most that rule's limit.
     */
    private boolean usableNow(String ruleShape, long quota) {
        Rule rule = rules.get().rules().get(ruleShape.substring(0, ruleShape.indexOf('@')));
        return rule != null && rule.scope() == Scope.GLOBAL && rule.limit().quota() == quota
                && ruleShape.equals(rule.id() + "@" + rule.limit().shape());
    }

    /**
     * Whether the topic has been read to where it ended when this listener found it: the shares the rebalancer had
     * published are the ones in force here. Stays true (a later outage shows as stale shares, not here). False while
     * it is read, and also when the topic does not exist or could not be read within {@code staleAfter} (the default
     * split applies then: see {@link #heldToFloor}).
     */
    public boolean readToEnd() {
        return readToEnd;
    }

    /**
     * Whether global buckets without a share still hold only the floor: until the topic is read to its end, found
     * missing, or {@code staleAfter} has passed without reading it.
     */
    public boolean heldToFloor() {
        return shares.awaitingShares();
    }

    /**
     * What the health detail {@code readingShares} showed: true once the topic was found and the floor lifted, whether
     * by reading it to its end or by giving up after {@code staleAfter}; false while still reading (the name reads
     * the other way round).
     *
     * @deprecated for {@link #readToEnd} and {@link #heldToFloor}; kept for the deprecated health detail, one release
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public boolean reading() {
        return assigned && !shares.awaitingShares();
    }

    /** Share records applied (tombstones included). */
    public long applied() {
        return applied.get();
    }

    /** Share records made under other regions or weights (applied no higher than the default split). */
    public long mismatched() {
        return mismatched.get();
    }

    /** Share records skipped as unusable. */
    public long refused() {
        return refused.get();
    }

    @Override
    public void close() {
        running = false;
        ListenerThreads.stop(thread, consumer);
    }
}
