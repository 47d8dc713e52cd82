package dev.ratelimiter.rebalancer;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

/**
 * The rebalancer: every region's usage topic (mirrored into this cluster) in, the compacted shares topic out.
 * Usage records are keyed by bucket, so each bucket's records and state live in one stream task, and the shares it
 * publishes are keyed the same, so every region reads one bucket's shares in order.
 */
public final class RebalancerTopology {

    public static final String DEFAULT_USAGE_TOPIC = "ratelimit.region-usage";

    public static final String DEFAULT_SHARES_TOPIC = "ratelimit.region-shares";

    /** The key of the heartbeat record published every interval (bucket keys always contain a '/'). */
    public static final String HEARTBEAT = "heartbeat";

    private final RebalancerSettings settings;

    public RebalancerTopology(RebalancerSettings settings) {
        this.settings = settings;
    }

    public Topology build() {
        Topology topology = new Topology();
        topology.addSource("region-usage", Serdes.String().deserializer(), Serdes.String().deserializer(),
                settings.usageTopic());
        topology.addProcessor("rebalance", () -> new RebalanceProcessor(settings), "region-usage");
        // In memory: a few hundred bytes per active global bucket, restored from its changelog after a restart, so
        // the rebalancer resumes with the shares it had published and no native library has to load.
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(RebalanceProcessor.STORE),
                Serdes.String(), Serdes.String()), "rebalance");
        topology.addSink("region-shares", settings.sharesTopic(), Serdes.String().serializer(),
                Serdes.String().serializer(), "rebalance");
        return topology;
    }
}
