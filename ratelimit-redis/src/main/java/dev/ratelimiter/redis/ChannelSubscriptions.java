package dev.ratelimiter.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * The Redis channels the limiter listens to (rule changes), on a pub/sub connection of their own: opened on the
 * connect thread once the main connection is, subscribed to every channel someone listens to, and renewed by Lettuce
 * after a reconnect. A subscription that fails is tried again with the connect thread's back-off.
 */
final class ChannelSubscriptions {

    private static final Logger logger = LoggerFactory.getLogger(ChannelSubscriptions.class);

    private final Supplier<AbstractRedisClient> client;
    private final String description;
    private final ConnectThread connector;
    private final BooleanSupplier mayConnect;
    private final Map<String, Set<FluxSink<String>>> listeners = new ConcurrentHashMap<>();
    private final Set<String> subscribed = ConcurrentHashMap.newKeySet();
    private volatile StatefulRedisPubSubConnection<String, String> pubSub;
    private int attempts;

    /** @param mayConnect whether the main connection is open (and neither closed nor suspended) */
    ChannelSubscriptions(Supplier<AbstractRedisClient> client, String description, ConnectThread connector,
            BooleanSupplier mayConnect) {
        this.client = client;
        this.description = description;
        this.connector = connector;
        this.mayConnect = mayConnect;
    }

    /** See {@link LimiterConnection#messages}. */
    Flux<String> messages(String channel) {
        return Flux.create(sink -> {
            Set<FluxSink<String>> sinks = listeners.computeIfAbsent(channel, c -> ConcurrentHashMap.newKeySet());
            sinks.add(sink);
            sink.onDispose(() -> sinks.remove(sink));
            connector.submit(this::connect);
        });
    }

    /** Opens the pub/sub connection when needed and subscribes to the channels missing; on the connect thread. */
    void connect() {
        if (!mayConnect.getAsBoolean() || listeners.isEmpty()) {
            return;
        }
        try {
            if (pubSub == null) {
                pubSub = open();
            }
            List<String> missing = new ArrayList<>();
            for (String channel : listeners.keySet()) {
                if (subscribed.add(channel)) {
                    missing.add(channel);
                }
            }
            if (!missing.isEmpty()) {
                pubSub.async().subscribe(missing.toArray(String[]::new)).whenComplete((done, failure) -> {
                    if (failure != null) {
                        missing.forEach(subscribed::remove);
                        connector.submit(() -> connector.retry(this::connect, ++attempts));
                    }
                });
            }
        }
        catch (RuntimeException ex) {
            logger.debug("Cannot subscribe to rule changes in Redis ({}) yet: {}", description, ex.toString());
            connector.retry(this::connect, ++attempts);
        }
    }

    private StatefulRedisPubSubConnection<String, String> open() {
        AbstractRedisClient redisClient = client.get();
        StatefulRedisPubSubConnection<String, String> opened = redisClient instanceof RedisClusterClient cluster
                ? cluster.connectPubSub(StringCodec.UTF8)
                : ((RedisClient) redisClient).connectPubSub(StringCodec.UTF8);
        opened.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
                Set<FluxSink<String>> sinks = listeners.get(channel);
                if (sinks != null) {
                    sinks.forEach(sink -> sink.next(message));
                }
            }
        });
        return opened;
    }

    /** Forgets the pub/sub connection and its subscriptions (made again on the next {@link #connect}). */
    StatefulRedisPubSubConnection<String, String> detach() {
        StatefulRedisPubSubConnection<String, String> open = pubSub;
        pubSub = null;
        subscribed.clear();
        return open;
    }

    /** Ends every listener's flux: the connection is closed for good. */
    void completeAll() {
        listeners.values().forEach(sinks -> sinks.forEach(FluxSink::complete));
    }
}
