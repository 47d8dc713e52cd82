package dev.ratelimiter.testsupport;

import java.util.List;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starting and stopping the processes of a {@link RedisCluster} or {@link RedisSentinel}: the same port race and
 * the same clean-up for both.
 */
final class TopologyNodes {

    private static final Logger logger = LoggerFactory.getLogger(TopologyNodes.class);

    private static final int START_ATTEMPTS = 3;

    private TopologyNodes() {
    }

    /**
     * Starts a node, trying again (up to {@value #START_ATTEMPTS} times in all) when a start fails: a probed free
     * port can be taken by someone else before the server binds it, and {@code start} probes a new one each time.
     */
    static <T> T start(Supplier<T> start) {
        RuntimeException failure = null;
        for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
            try {
                return start.get();
            }
            catch (RuntimeException ex) {
                failure = ex;
            }
        }
        throw failure;
    }

    /** Stops every node; one that cannot be stopped is logged, so that the others are still stopped. */
    static void closeAll(List<RedisNode> nodes) {
        for (RedisNode node : nodes) {
            try {
                node.close();
            }
            catch (RuntimeException ex) {
                logger.warn("Could not stop {}", node, ex);
            }
        }
    }
}
