package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.StoreTimeoutException;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A decision call Redis runs only after the gateway's timer gave up on it (it sat in Redis's input while Redis was
 * paused) is stale: its request was decided without Redis, by the fallback, whose admissions are charged back — run
 * as well, it would count them twice. Redis knows from the call when that is, in its own clock: the write plus the
 * store timeout, less a margin for the answer's way back. It then decides and writes nothing.
 */
class StaleCallTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final RedisKeys keys = new RedisKeys("rl");
    private static TestConnection connection;
    private static RedisRateLimitStore store;

    private final Rule rule = new Rule("stale", "stale", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("stale.", 10, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);

    @BeforeAll
    static void connect() {
        connection = TestConnection.open(redis.host(), redis.port());
        connection.connection().warmPrimaries(System.nanoTime() + Duration.ofSeconds(5).toNanos());
        // A store timeout of 50 ms, so that a cold first call on a shared machine is not what times out here.
        store = new RedisRateLimitStore(connection.connection(), keys, false, Duration.ofMillis(50));
    }

    @AfterAll
    static void close() {
        connection.close();
    }

    private Check check(String client) {
        return new Check(rule, new BucketKey(ClientIds.unkeyed().of(client), "stale@t"), 1, false);
    }

    /** Whole tokens in the bucket (it refills by 10 an hour: a few millionths between two calls). */
    private long tokens(Check check) {
        return (long) Math.floor(Double.parseDouble(redis.command("HGET", keys.bucket(check.bucket()), "t").trim()));
    }

    @Test
    void aCallRedisRunsLongAfterItsTimeoutSpendsNothing() throws Exception {
        Check check = check("paused-client");
        // Redis has answered once: the limiter knows its clock.
        assertThat(store.evaluate(List.of(check)).block(Duration.ofSeconds(5)).allowed()).isTrue();
        assertThat(tokens(check)).isEqualTo(9);

        redis.server().pause();
        try {
            assertThatThrownBy(() -> store.evaluate(List.of(check)).block(Duration.ofSeconds(5)))
                    .hasCauseInstanceOf(StoreTimeoutException.class);
            Thread.sleep(1_000);
        }
        finally {
            redis.server().resume();
        }
        // The next call runs after the stale one (one connection, in order).
        assertThat(store.evaluate(List.of(check)).block(Duration.ofSeconds(5)).allowed()).isTrue();
        assertThat(tokens(check)).as("the stale call spent nothing; the next one spent one").isEqualTo(8);
    }

    @Test
    void aCallRedisRunsJustAfterItsTimeoutSpendsNothingEither() throws Exception {
        Check check = check("slow-client");
        assertThat(store.evaluate(List.of(check)).block(Duration.ofSeconds(5)).allowed()).isTrue();

        redis.server().pause();
        try {
            assertThatThrownBy(() -> store.evaluate(List.of(check)).block(Duration.ofSeconds(5)))
                    .hasCauseInstanceOf(StoreTimeoutException.class);
        }
        finally {
            // at once: Redis runs the call a moment after the gateway gave up on it
            redis.server().resume();
        }
        assertThat(store.evaluate(List.of(check)).block(Duration.ofSeconds(5)).allowed()).isTrue();
        assertThat(tokens(check)).as("the late call, decided without Redis already, spent nothing").isEqualTo(8);
    }

    @Test
    void aCallRedisRunsInTimeIsAnsweredAndCounts() {
        Check check = check("prompt-client");
        for (int i = 0; i < 3; i++) {
            assertThat(store.evaluate(List.of(check)).block(Duration.ofSeconds(5)).allowed()).isTrue();
        }
        assertThat(tokens(check)).isEqualTo(7);
    }
}
