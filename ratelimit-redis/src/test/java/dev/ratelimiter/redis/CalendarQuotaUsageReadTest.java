package dev.ratelimiter.redis;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.BucketReading;
import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.UsageProbe;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The usage API's reading of a calendar quota on a real Redis: the count of the period in progress, read from the key
 * named for that period, with the reset at the period's end; reading spends nothing and makes no key.
 */
class CalendarQuotaUsageReadTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final RedisKeys keys = new RedisKeys("rl");
    private static TestConnection connection;
    private static RedisRateLimitStore store;
    private static RedisUsageReader reader;

    @BeforeAll
    static void connect() {
        connection = TestConnection.open(redis.host(), redis.port());
        store = new RedisRateLimitStore(connection.connection(), keys, false, Duration.ofSeconds(2));
        reader = new RedisUsageReader(connection.connection(), keys, false, Duration.ofSeconds(2));
    }

    @AfterAll
    static void disconnect() {
        connection.close();
    }

    @BeforeEach
    void flush() {
        redis.command("FLUSHALL");
    }

    private static Rule daily(long limit) {
        return new Rule("daily", "daily", Match.ANY, List.of(Dimension.API_KEY),
                CalendarQuotaLimit.of("daily.", limit, "day", "UTC", null, null), 0, Mode.ENFORCE, FailureMode.LOCAL);
    }

    private static BucketKey bucket(Rule rule, String client) {
        return new BucketKey(ClientIds.unkeyed().of(client), rule.id() + "@" + rule.limit().shape());
    }

    private static BucketReading read(Rule rule, String client) {
        return reader.read(List.of(new UsageProbe(rule, bucket(rule, client)))).block(Duration.ofSeconds(5)).get(0);
    }

    @Test
    void readsThePeriodsCountWithItsResetAtMidnightAndSpendsNothing() {
        Rule rule = daily(5);
        Check check = new Check(rule, bucket(rule, "acme"), 2, false);
        for (int i = 0; i < 2; i++) {
            assertThat(store.evaluate(List.of(check)).block(Duration.ofSeconds(5)).allowed()).isTrue();
        }
        String keysBefore = redis.command("KEYS", "*").trim();
        assertThat(keysBefore).as("one key, named for today").endsWith(":" + LocalDate.now(ZoneOffset.UTC));
        long pttlBefore = Long.parseLong(redis.command("PTTL", keysBefore).trim());

        BucketReading reading = null;
        for (int i = 0; i < 50; i++) {
            reading = read(rule, "acme");
        }
        assertThat(reading.stored()).isTrue();
        assertThat(reading.remaining()).as("5 a day, 4 spent").isEqualTo(1);
        Instant midnight = LocalDate.now(ZoneOffset.UTC).plusDays(1).atStartOfDay().toInstant(ZoneOffset.UTC);
        Duration toMidnight = Duration.between(Instant.now(), midnight);
        assertThat(reading.resetAfter()).as("whole again at midnight UTC")
                .isBetween(toMidnight.minusSeconds(5), toMidnight.plusSeconds(5));

        assertThat(redis.command("HGET", keysBefore, "c").trim()).as("the count, untouched").isEqualTo("4");
        assertThat(Long.parseLong(redis.command("PTTL", keysBefore).trim())).as("the TTL, not extended")
                .isLessThanOrEqualTo(pttlBefore);
        // The next decision finds what the reading said: one request of 1 passes, then none.
        Check one = new Check(rule, bucket(rule, "acme"), 1, false);
        assertThat(store.evaluate(List.of(one)).block(Duration.ofSeconds(5)).allowed()).isTrue();
        assertThat(store.evaluate(List.of(one)).block(Duration.ofSeconds(5)).allowed()).isFalse();
    }

    @Test
    void aClientThatNeverSpentReadsWholeAndNoKeyIsMade() {
        Rule rule = daily(7);
        BucketReading reading = read(rule, "never-seen");
        assertThat(reading.stored()).isFalse();
        assertThat(reading.remaining()).isEqualTo(7);
        assertThat(redis.command("DBSIZE").trim()).isEqualTo("0");
    }
}
