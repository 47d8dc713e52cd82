package dev.ratelimiter;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.blockhound.integration.BlockHoundIntegration;

import static org.assertj.core.api.Assertions.fail;

/**
 * Makes a blocking call on a non-blocking thread fail the test that made it. BlockHound (installed for every test by
 * its JUnit platform listener) throws where the call is made — on a Netty event loop or a Reactor worker, where a
 * request or a timer may swallow the error and log it — so every such call is also recorded here, and after each test
 * (registered by JUnit's extension auto-detection) any call recorded fails the test with where it was made.
 */
public final class BlockingCalls implements BlockHoundIntegration, AfterEachCallback {

    private static final Queue<String> seen = new ConcurrentLinkedQueue<>();

    @Override
    public void applyTo(BlockHound.Builder builder) {
        // Netty loads the zstd native library when its decompressor class is first used: once per JVM, not per request.
        builder.allowBlockingCallsInside("io.netty.handler.codec.compression.Zstd", "<clinit>");
        // Netty's pooled allocator growing its pool of buffers, rarely: a lock held while a magazine is added.
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines");
        // Lettuce's own I/O threads, building a connection object (to a sentinel, while it looks the primary up after a
        // failover): a lock around its cache of method translations, held for a map look-up. Not on a request's path.
        builder.allowBlockingCallsInside("io.lettuce.core.internal.AbstractInvocationHandler$MethodTranslator", "of");
        // Lettuce's own I/O thread finishing a connection to a cluster node (after a failover, a new primary): it sets
        // the new connection's auto-flush under the connection provider's state lock, which another thread may hold
        // for the moment it takes to look a node connection up or start one. Lettuce's (7.5) code, a lock held for
        // microseconds, on Lettuce's thread, not a request's (RedisClusterFailoverTest saw it once in eight runs).
        builder.allowBlockingCallsInside(
                "io.lettuce.core.cluster.PooledClusterConnectionProvider$NodeConnectionPostProcessor", "lambda$apply$4");
        builder.blockingMethodCallback(method -> {
            String stack = Arrays.stream(new Throwable().getStackTrace()).skip(2).limit(25)
                    .map(frame -> "    at " + frame).collect(Collectors.joining("\n"));
            seen.add(method + " on " + Thread.currentThread().getName() + "\n" + stack);
            throw new BlockingOperationError(method);
        });
    }

    /** Forgets what was recorded: for the test that blocks on purpose to show the check is on. */
    static void forget() {
        seen.clear();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        List<String> calls = new ArrayList<>();
        for (String call = seen.poll(); call != null; call = seen.poll()) {
            calls.add(call);
        }
        if (!calls.isEmpty()) {
            fail(calls.size() + " blocking call(s) on non-blocking threads during this test:\n"
                    + String.join("\n", calls.subList(0, Math.min(5, calls.size()))));
        }
    }
}
