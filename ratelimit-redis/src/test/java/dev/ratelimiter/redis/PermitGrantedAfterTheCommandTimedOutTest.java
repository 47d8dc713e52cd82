package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.testsupport.LatencyProxy;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A concurrency script that runs in Redis after Lettuce itself gave up on it (its 2 s command timeout): nothing ever
 * reports the permit the script took, so the only thing that gives it back is the store treating every failed call as
 * "possibly granted" and giving back what it asked for. The permit storm's jitter stays under the command timeout;
 * this test does not, and fails if that branch is removed (the permit then stays for its whole 30 s lease).
 */
class PermitGrantedAfterTheCommandTimedOutTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static LatencyProxy network;
    private static TestConnection connection;
    private static RedisRateLimitStore store;

    @BeforeAll
    static void connect() {
        network = new LatencyProxy(redis.host(), redis.port(), Duration.ZERO);
        connection = TestConnection.open("127.0.0.1", network.port());
        // A store timeout of 1 s (the warm-up call below goes through a proxy thread on a shared machine) and a
        // longest wait beyond the delay below: a call run later than that is stale and takes nothing (StaleCallTest);
        // this test is about one run late, but not that late.
        store = new RedisRateLimitStore(connection.connection(), new RedisKeys("rl"), false, Duration.ofSeconds(1));
    }

    @AfterAll
    static void close() {
        connection.close();
        network.close();
    }

    @Test
    void aPermitGrantedByAScriptThatRanAfterLettuceTimedItOutIsGivenBack() throws Exception {
        Rule rule = new Rule("slow-reports", "slow-reports", Match.ANY, List.of(Dimension.API_KEY),
                ConcurrencyLimit.of("c.", 1, Duration.ofSeconds(30)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        BucketKey bucket = new BucketKey(ClientIds.unkeyed().of("late"), "slow-reports@c");
        String key = new RedisKeys("rl").bucket(bucket);

        // Warm the script cache, as start-up does: a first EVALSHA answered NOSCRIPT after the timeout would never run
        // the script (the rate-limit script's, or the give-back's, which is sent while the network is still slow).
        assertThat(connection.connection().warmPrimaries(System.nanoTime() + Duration.ofSeconds(5).toNanos()))
                .isEqualTo(1);
        RequestPermits warm = new RequestPermits();
        assertThat(store.evaluate(List.of(new Check(rule, new BucketKey(ClientIds.unkeyed().of("warm"), "slow-reports@c"), 1,
                false, warm))).block(Duration.ofSeconds(5)).allowed()).isTrue();
        warm.end();

        network.delay(Duration.ofMillis(2_500)); // longer than Lettuce's 2 s command timeout
        RequestPermits permits = new RequestPermits();
        Verdict verdict = store.evaluate(List.of(new Check(rule, bucket, 1, false, permits)))
                .timeout(Duration.ofMillis(5)).onErrorResume(timeout -> Mono.empty()).block(Duration.ofSeconds(1));
        assertThat(verdict).as("the caller stopped waiting after 5 ms").isNull();
        permits.end(); // the request ended (decided by the fallback, answered, gone)
        Thread.sleep(2_100);
        network.delay(Duration.ZERO);

        long deadline = System.nanoTime() + Duration.ofSeconds(6).toNanos();
        String inRedis = "?";
        while (System.nanoTime() < deadline) {
            inRedis = redis.command("ZCARD", key).trim();
            if ("0".equals(inRedis) && store.permits().pendingGiveBacks() == 0) {
                break;
            }
            Thread.sleep(50);
        }
        assertThat(redis.command("EXISTS", key).trim().equals("0") || "0".equals(inRedis))
                .as("the permit the late script took was given back (ZCARD " + inRedis + ")").isTrue();
        assertThat(store.permits().held()).as("renewed by this instance").isZero();
    }
}
