package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import dev.ratelimiter.core.StoreStack;

/** Where buckets live ({@code ratelimit.store}): the store, its timeout and breaker, local mode's settle interval. */
public class StoreProperties {

    /**
     * Where buckets live: auto uses this instance's memory until Redis first answers, then Redis.
     */
    private StoreType type = StoreType.AUTO;

    /**
     * Longest Redis may take to answer a decision, counted from the moment its call is sent, on the thread that reads
     * the answer (a busy gateway takes an answer already on its way rather than deciding without Redis) and by Redis on
     * its own clock (a call it runs later decides nothing). Past it, each rule decides by its failure mode. Never
     * retried.
     */
    private Duration timeout = Duration.ofMillis(5);

    /**
     * Longest a decision waits for Redis in all, from the moment the limiter asks: the backstop for a call that could
     * not be sent (a connection opening) and for a gateway too busy to read its answer. At least the timeout; unset,
     * the timeout plus 100 ms.
     */
    private Duration maxWait;

    /**
     * Each instance's share of a limit while Redis cannot answer: limit divided by the live instances, times this.
     * 1 holds an evenly spread client to its limit but refuses a client reaching one instance early; 2 lets such a
     * client have twice its share and an evenly spread one up to twice its limit. Either way what the fallback admits
     * is charged to Redis when it answers again.
     */
    private double fallbackShareFactor = 1.0;

    /**
     * Longest the start-up check waits for Redis: the connection (on a cluster, one to every primary) opened, every
     * script loaded on every primary, and one decision through Redis, before the gateway takes its first request.
     */
    private Duration startupProbeTimeout = Duration.ofSeconds(2);

    /**
     * Name of the circuit breaker in front of Redis. Configure it with resilience4j.circuitbreaker.instances.<name>.*;
     * unless configured there, it opens when half of the last 20 calls failed or timed out and tries Redis again
     * after 1 second.
     */
    private String breakerName = "ratelimit-redis";

    /**
     * How often each instance settles its shares of local-mode buckets with Redis, at most (one call for all the keys
     * that need it).
     */
    private Duration settleInterval = Duration.ofMillis(100);

    /**
     * The most exact-decision calls to Redis out at once (standalone and Sentinel): decisions that arrive meanwhile
     * wait for a reply and go together in the next call, so that the batch grows with the load and one call's
     * overhead is shared by more decisions. Idle, nothing waits. 0 sends every batch at once (no limit); on Redis
     * Cluster calls are never held back.
     */
    private int callsInFlight = 2;

    /**
     * The longest a local-mode key goes without settling with Redis when only this instance uses it and its client
     * would spend at most half the bucket in that time: it then holds at most half the bucket (the rest stays in
     * Redis for any other instance) and settles early when its share runs low, a request is refused or its client
     * pauses. Longer costs Redis less per request; a dead instance's silent share returns that much later. 0 settles
     * every key in use at every interval.
     */
    private Duration settleMaxSilence = Duration.ofSeconds(2);

    /**
     * Whether a bucket that refused a request is answered from memory until its retry time (at most 1 s) without
     * asking Redis.
     */
    private boolean denialCache = true;

    /**
     * How often each instance announces itself in Redis; the live count sizes the fallback buckets.
     */
    private Duration heartbeatInterval = Duration.ofSeconds(5);

    /**
     * Longest pause between the Redis client's reconnect attempts after Redis went away (attempts start at 10 ms
     * and double, with jitter). Lettuce's own default grows to 30 s, so a gateway could go on deciding from its
     * fallback share for many seconds after Redis is back. Applies to the application's Lettuce client (the one
     * the limiter shares); 0 leaves Lettuce's default alone.
     */
    private Duration reconnectMaxDelay = Duration.ofSeconds(1);

    /**
     * Prefix of every Redis key the limiter writes.
     */
    private String keyPrefix = "rl";

    /**
     * Gateway instances to assume share the limits until Redis has answered once (the fallback divides each limit
     * among the live instances, which an instance started during an outage cannot count). Set it to the fleet's
     * usual size; the Helm chart sets it to its replica count. Left unset with Redis, start-up warns: a fleet started
     * during an outage would admit each limit once per instance.
     */
    private int expectedInstances = 1;

    public Duration getMaxWait() {
        return maxWait;
    }

    /** {@link #getMaxWait()}, or the timeout plus {@link StoreStack#DEFAULT_QUEUE_ALLOWANCE} when it is not set. */
    public Duration effectiveMaxWait() {
        return maxWait != null ? maxWait : timeout.plus(StoreStack.DEFAULT_QUEUE_ALLOWANCE);
    }

    public void setMaxWait(Duration maxWait) {
        this.maxWait = maxWait;
    }

    public double getFallbackShareFactor() {
        return fallbackShareFactor;
    }

    public void setFallbackShareFactor(double fallbackShareFactor) {
        this.fallbackShareFactor = fallbackShareFactor;
    }

    public int getExpectedInstances() {
        return expectedInstances;
    }

    public void setExpectedInstances(int expectedInstances) {
        this.expectedInstances = expectedInstances;
    }

    public Duration getReconnectMaxDelay() {
        return reconnectMaxDelay;
    }

    public void setReconnectMaxDelay(Duration reconnectMaxDelay) {
        this.reconnectMaxDelay = reconnectMaxDelay;
    }

    /**
     * Most buckets kept in this instance's memory (in memory mode, and as the fallback when Redis fails).
     */
    private long localMaxKeys = 100_000;

    /**
     * How Redis is laid out, which decides whether one script may touch keys of several hash slots: auto follows the
     * connection Spring Boot made (a cluster when spring.data.redis.cluster.* is set); cluster keeps every script
     * within one slot, for a cluster the connection does not show as one (behind a proxy that routes by key);
     * standalone for one server, a primary with replicas, or Sentinel.
     */
    private RedisTopology redisTopology = RedisTopology.AUTO;

    public StoreType getType() {
        return type;
    }

    public void setType(StoreType type) {
        this.type = type;
    }

    public Duration getTimeout() {
        return timeout;
    }

    public void setTimeout(Duration timeout) {
        this.timeout = timeout;
    }

    public Duration getStartupProbeTimeout() {
        return startupProbeTimeout;
    }

    public void setStartupProbeTimeout(Duration startupProbeTimeout) {
        this.startupProbeTimeout = startupProbeTimeout;
    }

    public Duration getSettleInterval() {
        return settleInterval;
    }

    public void setSettleInterval(Duration settleInterval) {
        this.settleInterval = settleInterval;
    }

    public int getCallsInFlight() {
        return callsInFlight;
    }

    public void setCallsInFlight(int callsInFlight) {
        this.callsInFlight = callsInFlight;
    }

    public Duration getSettleMaxSilence() {
        return settleMaxSilence;
    }

    public void setSettleMaxSilence(Duration settleMaxSilence) {
        this.settleMaxSilence = settleMaxSilence;
    }

    public boolean isDenialCache() {
        return denialCache;
    }

    public void setDenialCache(boolean denialCache) {
        this.denialCache = denialCache;
    }

    public String getBreakerName() {
        return breakerName;
    }

    public void setBreakerName(String breakerName) {
        this.breakerName = breakerName;
    }

    public Duration getHeartbeatInterval() {
        return heartbeatInterval;
    }

    public void setHeartbeatInterval(Duration heartbeatInterval) {
        this.heartbeatInterval = heartbeatInterval;
    }

    public String getKeyPrefix() {
        return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    public long getLocalMaxKeys() {
        return localMaxKeys;
    }

    public void setLocalMaxKeys(long localMaxKeys) {
        this.localMaxKeys = localMaxKeys;
    }

    public RedisTopology getRedisTopology() {
        return redisTopology;
    }

    public void setRedisTopology(RedisTopology redisTopology) {
        this.redisTopology = redisTopology;
    }

    /** Where buckets live. */
    public enum StoreType {
        /** This instance's memory until Redis first answers (a warning says so), then Redis for good. */
        AUTO,
        /** Redis, always; a failing Redis is bridged by deciding from memory per request. */
        REDIS,
        /** This instance's memory only: exact for a single instance, per-instance for a fleet. */
        MEMORY
    }

    /** How Redis is laid out, as far as the limiter's scripts care. */
    public enum RedisTopology {
        /** A cluster when the connection is cluster-aware (spring.data.redis.cluster.*), else standalone. */
        AUTO,
        /** One primary (with replicas, or found through Sentinel): a script may touch any key. */
        STANDALONE,
        /** Redis Cluster, seen by the connection or not: every script stays within one hash slot. */
        CLUSTER
    }
}
