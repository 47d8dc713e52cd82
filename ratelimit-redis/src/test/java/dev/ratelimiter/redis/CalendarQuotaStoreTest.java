package dev.ratelimiter.redis;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.CalendarPeriods;
import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.FallbackCharges;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.testsupport.RedisServerExtension;
import io.lettuce.core.ScriptOutputType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Calendar quotas in a real Redis: one key per client and period, named by the period's first day, its TTL at the
 * period's end; a refusal's retry-after at the boundary; a call that lands outside the period it was sent (across
 * midnight of Berlin's 25-hour day, played with the script's clock shift) writes nothing and answers the store's
 * time, from which the store sends the request again for the right period; fallback charges counted into the period.
 */
class CalendarQuotaStoreTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final RedisKeys keys = new RedisKeys("rl");
    private static final long SLACK = RedisRateLimitStore.TTL_SLACK_MILLIS;
    private static TestConnection connection;
    private static RedisRateLimitStore store;

    @BeforeAll
    static void connect() {
        connection = TestConnection.open(redis.host(), redis.port());
        store = new RedisRateLimitStore(connection.connection(), keys, false, Duration.ofSeconds(2));
    }

    @AfterAll
    static void disconnect() {
        connection.close();
    }

    @BeforeEach
    void flush() {
        redis.command("FLUSHALL");
    }

    private static Rule quota(String id, long limit, String period, String zone, Integer anchorDay) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY),
                CalendarQuotaLimit.of(id + ".", limit, period, zone, anchorDay, null), 0, Mode.ENFORCE,
                FailureMode.LOCAL);
    }

    private static Check check(Rule rule, String client, int cost) {
        return new Check(rule, new BucketKey(ClientIds.unkeyed().of(client), rule.id()), cost, false);
    }

    private static String keyOf(Check check, LocalDate periodStart) {
        return keys.bucket(check.bucket()) + ":" + periodStart;
    }

    private static RuleOutcome decide(RedisRateLimitStore on, Check check) {
        Verdict verdict = on.evaluate(List.of(check)).block(Duration.ofSeconds(5));
        return verdict.outcomes().get(0);
    }

    @Test
    void countsIntoOneKeyPerPeriodWhoseTtlEndsAtTheBoundary() {
        Rule rule = quota("daily", 3, "day", "UTC", null);
        Check check = check(rule, "acme", 1);
        long before = serverMicros();
        List<RuleOutcome> outcomes = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            outcomes.add(decide(store, check));
        }
        long after = serverMicros();
        assertThat(outcomes).extracting(RuleOutcome::allowed).containsExactly(true, true, true, false);
        assertThat(outcomes).extracting(RuleOutcome::remaining).containsExactly(2L, 1L, 0L, 0L);
        Instant midnight = LocalDate.ofInstant(micros(after), ZoneOffset.UTC).plusDays(1).atStartOfDay()
                .toInstant(ZoneOffset.UTC);
        long toMidnightBefore = midnight.toEpochMilli() * 1_000 - before;
        long toMidnightAfter = midnight.toEpochMilli() * 1_000 - after;
        RuleOutcome refused = outcomes.get(3);
        assertThat(refused.retryAfter().toNanos() / 1_000).as("retry-after: to midnight UTC")
                .isBetween(toMidnightAfter, toMidnightBefore);
        assertThat(refused.resetAfter()).isEqualTo(refused.retryAfter());
        String key = keyOf(check, LocalDate.ofInstant(micros(after), ZoneOffset.UTC));
        assertThat(redis.command("HGET", key, "c").trim()).isEqualTo("3");
        long pttl = Long.parseLong(redis.command("PTTL", key).trim());
        long toMidnightRead = midnight.toEpochMilli() * 1_000 - serverMicros();
        assertThat(pttl).as("PTTL: to midnight plus the slack")
                .isBetween(toMidnightRead / 1_000 + SLACK - 1, toMidnightBefore / 1_000 + SLACK + 1);
        assertThat(redis.command("KEYS", "*").trim().split("\n")).containsExactly(key);
    }

    @Test
    void aRequestOfSeveralRulesRefusedByItsQuotaSpendsNothingElse() {
        Rule daily = quota("daily", 1, "day", "Europe/Berlin", null);
        Rule bucket = new Rule("tb", "tb", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("tb.", 10, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        Check quotaCheck = check(daily, "acme", 1);
        Check bucketCheck = check(bucket, "acme", 1);
        assertThat(store.evaluate(List.of(bucketCheck, quotaCheck)).block(Duration.ofSeconds(5)).allowed()).isTrue();
        Verdict refused = store.evaluate(List.of(bucketCheck, quotaCheck)).block(Duration.ofSeconds(5));
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.outcomes().get(0).remaining()).as("the bucket's token given back").isEqualTo(9);
    }

    @Test
    void aStoreClockSeenDaysAheadCostsOneMoreCallNotAWrongPeriod() {
        RedisRateLimitStore ahead = new RedisRateLimitStore(connection.connection(), keys, false,
                Duration.ofSeconds(2));
        // This JVM believes Redis's clock three days ahead: it computes a period that has not begun there.
        ahead.batcher().clock().read(serverMicros() + TimeUnit.DAYS.toMicros(3), System.nanoTime());
        Rule rule = quota("daily", 5, "day", "UTC", null);
        Check check = check(rule, "acme", 2);
        long calls = ScriptCalls.of(redis);
        RuleOutcome outcome = decide(ahead, check);
        long after = serverMicros();
        assertThat(outcome.allowed()).isTrue();
        assertThat(outcome.remaining()).isEqualTo(3);
        assertThat(ScriptCalls.of(redis) - calls).as("sent again once, for the period Redis's time is in")
                .isEqualTo(2);
        String today = keyOf(check, LocalDate.ofInstant(micros(after), ZoneOffset.UTC));
        assertThat(redis.command("KEYS", "*").trim().split("\n")).containsExactly(today);
        assertThat(redis.command("HGET", today, "c").trim()).isEqualTo("2");
    }

    /**
     * A view of Redis's clock ahead of it, by a little more than each period: the period computed has not begun there.
     * (A view behind it cannot last: the call goes stale, and its reply, which carries Redis's time, puts the view
     * right; the period a call behind meets is the late call above, across midnight.)
     */
    @Test
    void whateverThisJvmBelievesOfRedisClockTheRequestCountsInThePeriodRedisIsIn() {
        long[] offsets = { TimeUnit.HOURS.toMicros(25), TimeUnit.DAYS.toMicros(8), TimeUnit.DAYS.toMicros(40) };
        String[][] calendars = { { "day", null }, { "week", null }, { "month", "31" } };
        for (String[] calendar : calendars) {
            for (long offset : offsets) {
                redis.command("FLUSHALL");
                RedisRateLimitStore off = new RedisRateLimitStore(connection.connection(), keys, false,
                        Duration.ofSeconds(2));
                off.batcher().clock().read(serverMicros() + offset, System.nanoTime());
                Rule rule = new Rule("q", "q", Match.ANY, List.of(Dimension.API_KEY), CalendarQuotaLimit.of("q.", 5,
                        calendar[0], "Europe/Berlin", calendar[1] == null ? null : Integer.valueOf(calendar[1]),
                        null), 0, Mode.ENFORCE, FailureMode.LOCAL);
                Check check = check(rule, "acme", 1);
                String where = calendar[0] + " seen " + offset + " us off";
                assertThat(decide(off, check).remaining()).as(where).isEqualTo(4);
                CalendarQuotaLimit quota = (CalendarQuotaLimit) rule.limit();
                String expected = keys.bucket(check.bucket()) + ":"
                        + quota.periodName(quota.spanAt(micros(serverMicros())));
                assertThat(redis.command("KEYS", "*").trim().split("\n")).as(where).containsExactly(expected);
            }
        }
    }

    @Test
    void acrossMidnightOfBerlinsLongestDayTheOldPeriodIsNeverCounted() throws Exception {
        CalendarQuotaLimit quota = CalendarQuotaLimit.of("q.", 10, "day", "Europe/Berlin", null, null);
        CalendarPeriods.Span longDay = quota.spanAt(Instant.parse("2026-10-25T12:00:00Z"));
        assertThat(longDay.length()).isEqualTo(Duration.ofHours(25));
        String oldKey = "rl:{x}:q:2026-10-25";
        String bounds = micros(longDay.start()) + ":" + micros(longDay.end());
        // Half a second before its end: counted, the key lives the half second and the slack.
        long target = micros(longDay.end()) - 500_000;
        List<Long> reply = call(oldKey, target, bounds, 1);
        assertThat(reply.subList(0, 5)).containsExactly(1L, 1L, 9L, 0L, micros(longDay.end()) - reply.get(5));
        assertThat(Long.parseLong(redis.command("PTTL", oldKey).trim())).isBetween(1L, 500 + SLACK);
        // A call sent with that day's bounds that Redis runs after its end: nothing written, its time answered.
        long late = micros(longDay.end()) + 1;
        reply = call(oldKey, late, bounds, 3);
        assertThat(reply.get(0)).as("refused as a whole").isZero();
        assertThat(reply.get(4)).as("reset-after -1: outside the period").isEqualTo(-1L);
        assertThat(reply.get(3)).as("the store's time").isBetween(late, late + 60_000_000L);
        assertThat(redis.command("HGET", oldKey, "c").trim()).isEqualTo("1");
        // Before its start, too (a store clock behind the gateway's view of it).
        assertThat(call(oldKey, micros(longDay.start()) - 60_000_000L, bounds, 1).get(4)).isEqualTo(-1L);
        assertThat(redis.command("HGET", oldKey, "c").trim()).isEqualTo("1");
        // The next day has its own key, full.
        CalendarPeriods.Span next = quota.spanAt(longDay.end());
        assertThat(next.length()).isEqualTo(Duration.ofHours(24));
        reply = call("rl:{x}:q:2026-10-26", late, micros(next.start()) + ":" + micros(next.end()), 3);
        assertThat(reply.subList(0, 3)).containsExactly(1L, 1L, 7L);
    }

    @Test
    void theShortDayOfMarchAndLeapFebruaryGetTheirOwnBounds() throws Exception {
        CalendarQuotaLimit day = CalendarQuotaLimit.of("q.", 10, "day", "Europe/Berlin", null, null);
        CalendarPeriods.Span shortDay = day.spanAt(Instant.parse("2026-03-29T12:00:00Z"));
        long target = micros(shortDay.start()) + 1;
        call("rl:{x}:d:2026-03-29", target, micros(shortDay.start()) + ":" + micros(shortDay.end()), 1);
        // TTL from its first microsecond: 23 hours and the slack, not 24
        assertThat(Long.parseLong(redis.command("PTTL", "rl:{x}:d:2026-03-29").trim()))
                .isBetween(Duration.ofHours(23).toMillis() - 60_000, Duration.ofHours(23).toMillis() + SLACK);
        CalendarQuotaLimit billing = CalendarQuotaLimit.of("q.", 10, "month", "UTC", 31, null);
        CalendarPeriods.Span february = billing.spanAt(Instant.parse("2028-02-10T00:00:00Z"));
        assertThat(billing.periodName(february)).isEqualTo("2028-01-31");
        List<Long> reply = call("rl:{x}:m:2028-01-31", micros(Instant.parse("2028-02-28T23:00:00Z")),
                micros(february.start()) + ":" + micros(february.end()), 4);
        assertThat(reply.get(4)).as("reset at the start of 29 February").isBetween(
                Duration.ofHours(1).toNanos() / 1_000 - 60_000_000L, Duration.ofHours(1).toNanos() / 1_000);
    }

    @Test
    void periodBoundsThatAreNotTwoTimesFailTheScriptBeforeAnyWrite() {
        assertThatThrownBy(() -> call("rl:{x}:bad", serverMicros(), "soon", 1))
                .isInstanceOf(ExecutionException.class).hasMessageContaining("needs its period");
        assertThat(redis.command("EXISTS", "rl:{x}:bad").trim()).isEqualTo("0");
    }

    @Test
    void aKeyOfAnotherTypeIsDroppedAndCountedAfresh() throws Exception {
        redis.command("SET", "rl:{x}:wrong", "text");
        long now = serverMicros();
        List<Long> reply = call("rl:{x}:wrong", now, (now - 1_000_000) + ":" + (now + 60_000_000), 2);
        assertThat(reply.subList(0, 3)).containsExactly(1L, 1L, 8L);
        assertThat(redis.command("HGET", "rl:{x}:wrong", "c").trim()).isEqualTo("2");
    }

    @Test
    void fallbackChargesCountIntoThePeriodInProgress() {
        Rule rule = quota("monthly", 100, "month", "UTC", 15);
        Check check = check(rule, "acme", 1);
        assertThat(decide(store, check).remaining()).isEqualTo(99);
        new RedisFallbackCharges(connection.connection(), keys, false)
                .charge(List.of(new FallbackCharges.Charge(check, 30))).block(Duration.ofSeconds(5));
        assertThat(decide(store, check).remaining()).as("1 + 30 charged + 1").isEqualTo(68);
        // A charge is at most one quota.
        new RedisFallbackCharges(connection.connection(), keys, false)
                .charge(List.of(new FallbackCharges.Charge(check, 1_000))).block(Duration.ofSeconds(5));
        RuleOutcome refused = decide(store, check);
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.remaining()).isZero();
        String key = redis.command("KEYS", "*").trim();
        assertThat(redis.command("HGET", key, "c").trim()).isEqualTo("132");
        assertThat(Long.parseLong(redis.command("PTTL", key).trim())).isPositive()
                .isLessThanOrEqualTo(Duration.ofDays(31).toMillis() + SLACK);
    }

    @Test
    void aChargeForAPeriodRedisHasLeftIsDropped() throws Exception {
        long now = serverMicros();
        Long charged = connection.connection().<Long>script(LimiterScript.CHARGE, ScriptOutputType.INTEGER,
                new String[] { "rl:{x}:ended", "rl:{x}:current" }, new String[] { "1000",
                        "q", "100", (now - 2 * 86_400_000_000L) + ":" + (now - 86_400_000_000L), "5", "0",
                        "q", "100", (now - 1_000_000) + ":" + (now + 86_400_000_000L), "5", "0" })
                .get(5, TimeUnit.SECONDS);
        assertThat(charged).isEqualTo(1);
        assertThat(redis.command("EXISTS", "rl:{x}:ended").trim()).isEqualTo("0");
        assertThat(redis.command("HGET", "rl:{x}:current", "c").trim()).isEqualTo("5");
        assertThat(Long.parseLong(redis.command("PTTL", "rl:{x}:current").trim()))
                .isBetween(86_400_000L - 60_000, 86_400_000L + SLACK);
    }

    /** One request of one quota check placed at {@code targetMicros} on the script's clock; the whole reply. */
    private static List<Long> call(String key, long targetMicros, String bounds, int cost) throws Exception {
        long shift = targetMicros - serverMicros();
        List<String> args = List.of("1000", Long.toString(shift), "0", "1", "1", "q", "10", bounds,
                Integer.toString(cost), "0");
        return connection.connection().<List<Long>>script(LimiterScript.RATE_LIMIT, ScriptOutputType.MULTI,
                new String[] { key }, args.toArray(String[]::new)).get(5, TimeUnit.SECONDS);
    }

    private static long serverMicros() {
        String[] parts = redis.command("TIME").trim().split("\\s+");
        return Long.parseLong(parts[0]) * 1_000_000 + Long.parseLong(parts[1]);
    }

    private static long micros(Instant instant) {
        return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1_000;
    }

    private static Instant micros(long micros) {
        return Instant.ofEpochSecond(0, micros * 1_000);
    }
}
