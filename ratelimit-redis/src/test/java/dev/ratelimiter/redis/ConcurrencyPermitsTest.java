package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
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
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrency permits in a real Redis: taken all or nothing with the request's other checks, given back exactly,
 * renewed while held, and freed within one lease when the instance holding them dies.
 */
class ConcurrencyPermitsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final RedisKeys keys = new RedisKeys("rl");

    private final List<TestConnection> connections = new ArrayList<>();
    private final List<PermitRenewal> renewals = new ArrayList<>();

    @BeforeEach
    void flush() {
        redis.command("FLUSHALL");
    }

    @AfterEach
    void close() {
        renewals.forEach(PermitRenewal::stop);
        connections.forEach(TestConnection::close);
    }

    @Test
    void capsRequestsInProgressAndAPermitGivenBackLetsTheNextOneIn() {
        RedisRateLimitStore store = instance();
        Rule rule = concurrency("reports", 3, Duration.ofSeconds(30));
        List<Check> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Check check = check(rule, "client");
            Verdict verdict = store.evaluate(List.of(check)).block();
            assertThat(verdict.allowed()).isTrue();
            assertThat(verdict.outcomes().get(0).remaining()).isEqualTo(2 - i);
            assertThat(verdict.permitsHeld()).containsExactly(check);
            held.add(check);
        }
        Verdict refused = store.evaluate(List.of(check(rule, "client"))).block();
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.outcomes().get(0).retryAfter()).isEqualTo(ConcurrencyLimit.RETRY_HINT);
        assertThat(refused.permitsHeld()).isEmpty();
        assertThat(inProgress(rule, "client")).isEqualTo(3);
        assertThat(store.evaluate(List.of(check(rule, "other-client"))).block().allowed())
                .as("another client has its own permits").isTrue();

        held.get(0).permits().end();
        held.get(0).permits().end();
        awaitInProgress(rule, "client", 2);
        assertThat(inProgress(rule, "client")).as("a permit given back twice frees one").isEqualTo(2);
        assertThat(store.evaluate(List.of(check(rule, "client"))).block().allowed()).isTrue();
        assertThat(store.permits().held()).isEqualTo(4);
    }

    @Test
    void aPermitIsNotTakenForARequestAnotherRuleRefuses() {
        RedisRateLimitStore store = instance();
        Rule permits = concurrency("reports", 3, Duration.ofSeconds(30));
        Rule bucket = new Rule("burst", "burst", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("burst.", 1, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        BucketKey bucketKey = new BucketKey(ClientIds.unkeyed().of("client"), "burst");
        assertThat(store.evaluate(List.of(new Check(bucket, bucketKey, 1, false), check(permits, "client"))).block()
                .allowed()).isTrue();
        Verdict refused = store.evaluate(List.of(new Check(bucket, bucketKey, 1, false), check(permits, "client")))
                .block();
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.outcomes().get(1).allowed()).as("the permit alone would have been granted").isTrue();
        assertThat(inProgress(permits, "client")).as("but it was not taken").isEqualTo(1);
    }

    @Test
    void permitsOfAnInstanceThatDiedAreFreedWithinOneLeaseWhileALiveInstanceKeepsItsOwn() {
        Duration lease = Duration.ofSeconds(2);
        Rule rule = concurrency("reports", 4, lease);
        RedisRateLimitStore dead = instance();
        RedisRateLimitStore live = instance();
        PermitRenewal liveRenewal = new PermitRenewal(live.permits(), Duration.ofMillis(100));
        renewals.add(liveRenewal);
        liveRenewal.start();
        for (int i = 0; i < 2; i++) {
            assertThat(dead.evaluate(List.of(check(rule, "client"))).block().allowed()).isTrue();
            assertThat(live.evaluate(List.of(check(rule, "client"))).block().allowed()).isTrue();
        }
        assertThat(live.evaluate(List.of(check(rule, "client"))).block().allowed()).isFalse();
        long killedAt = System.nanoTime();
        // The dead instance never releases nor renews; the live one keeps renewing for three leases.
        long freedAfterMillis = -1;
        while (System.nanoTime() - killedAt < lease.multipliedBy(3).toNanos()) {
            if (freedAfterMillis < 0 && inProgress(rule, "client") == 2) {
                freedAfterMillis = (System.nanoTime() - killedAt) / 1_000_000;
            }
            sleep(50);
        }
        assertThat(freedAfterMillis).as("the dead instance's two permits were freed").isPositive()
                .isLessThanOrEqualTo(lease.toMillis() + 200);
        assertThat(inProgress(rule, "client")).as("the live instance's permits outlived three leases").isEqualTo(2);
        assertThat(live.evaluate(List.of(check(rule, "client"))).block().allowed()).isTrue();
    }

    private RedisRateLimitStore instance() {
        TestConnection connection = TestConnection.open(redis.host(), redis.port());
        connections.add(connection);
        // a generous timeout: these tests are about permits and leases, and a call the default (tens of milliseconds)
        // abandons on a stalled machine decides nothing ("ran too late to be waited for"), which one clean run saw
        return new RedisRateLimitStore(connection.connection(), keys, false, Duration.ofSeconds(2));
    }

    private static Rule concurrency(String id, long max, Duration lease) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY), ConcurrencyLimit.of(id + ".", max, lease), 0,
                Mode.ENFORCE, FailureMode.LOCAL);
    }

    private static Check check(Rule rule, String client) {
        return new Check(rule, new BucketKey(ClientIds.unkeyed().of(client), rule.id()), 1, false, new RequestPermits());
    }

    private static void awaitInProgress(Rule rule, String client, long expected) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (inProgress(rule, client) != expected && System.nanoTime() < deadline) {
            sleep(10);
        }
    }

    private static long inProgress(Rule rule, String client) {
        String key = keys.bucket(new BucketKey(ClientIds.unkeyed().of(client), rule.id()));
        // Count live leases only, as the script does: expired ones are dropped on the next acquire.
        String[] time = redis.command("TIME").trim().split("\\s+");
        long nowMillis = Long.parseLong(time[0]) * 1000 + Long.parseLong(time[1]) / 1000;
        return Long.parseLong(redis.command("ZCOUNT", key, String.valueOf(nowMillis), "+inf").trim());
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
