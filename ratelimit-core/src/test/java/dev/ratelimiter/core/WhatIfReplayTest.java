package dev.ratelimiter.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A proposed rule replayed over recorded events: the Lua arithmetic at the events' times, and what it cannot judge. */
class WhatIfReplayTest {

    static final Instant START = Instant.parse("2026-12-01T09:59:30Z");

    static Rule rule(Match match, List<Dimension> key, Limit limit, Scope scope) {
        return new Rule("proposed", "proposed", match, key, limit, 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 1, null, scope);
    }

    static DecisionEvent event(Instant time, String client, String route, String region) {
        return new DecisionEvent(time, client, "free", route, "default", DecisionEvent.Verdict.ALLOWED, "evaluated",
                "store", "free.default", 10, 5, List.of(), null, null, "gw-1", region);
    }

    /** An arrival: who, and how long after the one before. */
    record Arrival(int client, long gapMillis) {
    }

    @TestFactory
    Stream<DynamicTest> aTokenBucketRefusesWhatAnIndependentModelOfTheScriptRefuses() {
        return Property.forAll(Gen.zip(Gen.longs(1, 20), Gen.longs(1, 10), arrivals(300, 120_000), List::of))
                .tries(300).check(this::sameRefusalsAsTheBucketModel);
    }

    @TestFactory
    Stream<DynamicTest> aSlidingWindowRefusesWhatAnIndependentModelOfTheScriptRefuses() {
        return Property.forAll(Gen.zip(Gen.longs(1, 15), Gen.longs(1, 20), arrivals(2_000, 40_000), List::of))
                .tries(300).check(this::sameRefusalsAsTheWindowModel);
    }

    /** Up to 300 arrivals from 4 clients: bursts (no gap), short gaps up to {@code shortGap} ms, a few long ones. */
    private static Gen<List<Arrival>> arrivals(long shortGap, long longGap) {
        return Gen.zip(Gen.ints(0, 3), Gen.frequency(Gen.weighted(3, Gen.just(0L)),
                Gen.weighted(5, Gen.longs(0, shortGap)), Gen.weighted(1, Gen.longs(longGap / 10, longGap))),
                Arrival::new).list(1, 300);
    }

    /** An algorithm as the script computes it, written here apart from the code under test. */
    interface Model {
        boolean allows(String client, long nowNanos);
    }

    @SuppressWarnings("unchecked")
    private void sameRefusalsAsTheBucketModel(List<Object> input) {
        long capacity = (Long) input.get(0);
        long perSecond = (Long) input.get(1);
        // tokens and the time of the last refill (ns): refill by the elapsed time, capped; spend one if there is
        Map<String, ModelBucket> buckets = new HashMap<>();
        sameRefusals(TokenBucketLimit.of("proposed", capacity, perSecond, Duration.ofSeconds(1)),
                (List<Arrival>) input.get(2), (client, now) -> {
                    ModelBucket bucket = buckets.computeIfAbsent(client, c -> new ModelBucket(capacity, now));
                    double level = Math.min(capacity,
                            bucket.tokens + (now - bucket.refilledAt) * (double) perSecond / 1e9);
                    if (level >= 1) {
                        bucket.tokens = level - 1;
                        bucket.refilledAt = now;
                    }
                    return level >= 1;
                });
    }

    @SuppressWarnings("unchecked")
    private void sameRefusalsAsTheWindowModel(List<Object> input) {
        long limit = (Long) input.get(0);
        long length = Duration.ofSeconds((Long) input.get(1)).toNanos();
        // per client: the index of the window counted in, its count, and the count of the window before it
        Map<String, long[]> windows = new HashMap<>();
        sameRefusals(SlidingWindowLimit.of("proposed", limit, Duration.ofNanos(length)), (List<Arrival>) input.get(2),
                (client, now) -> {
                    long index = Math.floorDiv(now, length);
                    long[] w = windows.computeIfAbsent(client, c -> new long[] { Long.MIN_VALUE, 0, 0 });
                    long current = w[0] == index ? w[1] : 0;
                    long previous = w[0] == index ? w[2] : w[0] == index - 1 ? w[1] : 0;
                    double elapsed = (double) (now - index * length) / length;
                    boolean allowed = previous * (1 - elapsed) + current + 1 <= limit;
                    w[0] = index;
                    w[1] = current + (allowed ? 1 : 0);
                    w[2] = previous;
                    return allowed;
                });
    }

    /** The replay of these arrivals under a per-client rule of {@code limit} refuses, per client, what the model does. */
    private static void sameRefusals(Limit limit, List<Arrival> arrivals, Model model) {
        WhatIfReplay replay = new WhatIfReplay(rule(Match.ANY, List.of(Dimension.API_KEY), limit, Scope.REGIONAL),
                ClientIdKeyring.unkeyed());
        Map<String, Long> expected = new HashMap<>();
        Instant time = START;
        for (Arrival a : arrivals) {
            time = time.plusMillis(a.gapMillis());
            String client = "c" + a.client();
            replay.replay(event(time, client, "api", "eu"));
            boolean allowed = model.allows(client, time.getEpochSecond() * 1_000_000_000L + time.getNano());
            expected.merge(client, allowed ? 0L : 1L, Long::sum);
        }
        WhatIfReport report = replay.report(10);
        Map<String, Long> refused = new HashMap<>();
        report.clientHours().forEach(row -> refused.merge(row.client(), row.refused(), Long::sum));
        expected.forEach((client, count) -> assertThat(refused.getOrDefault(client, 0L)).as(client)
                .isEqualTo(count));
        assertThat(report.matched()).isEqualTo(arrivals.size());
        assertThat(report.refused()).isEqualTo(expected.values().stream().mapToLong(Long::longValue).sum());
    }

    private static final class ModelBucket {
        double tokens;
        long refilledAt;

        ModelBucket(double tokens, long refilledAt) {
            this.tokens = tokens;
            this.refilledAt = refilledAt;
        }
    }

    @Test
    void countsPerClientAndHourAndNamesTheMostRefusedClients() {
        Rule rule = rule(Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("proposed", 2, 1, Duration.ofHours(1)), Scope.REGIONAL);
        WhatIfReplay replay = new WhatIfReplay(rule, ClientIdKeyring.unkeyed());
        // 40 s before the hour: 5 from a, 1 from b; after it: 3 more from a
        for (int i = 0; i < 5; i++) {
            replay.replay(event(START.plusSeconds(i), "a", "api", "eu"));
        }
        replay.replay(event(START.plusSeconds(6), "b", "api", "eu"));
        for (int i = 0; i < 3; i++) {
            replay.replay(event(START.plusSeconds(60 + i), "a", "api", "eu"));
        }
        WhatIfReport report = replay.report(1);
        assertThat(report.events()).isEqualTo(9);
        assertThat(report.refused()).isEqualTo(6);
        assertThat(report.clientHours()).containsExactly(
                new WhatIfReport.ClientHour("a", Instant.parse("2026-12-01T09:00:00Z"), 5, 3),
                new WhatIfReport.ClientHour("a", Instant.parse("2026-12-01T10:00:00Z"), 3, 3),
                new WhatIfReport.ClientHour("b", Instant.parse("2026-12-01T09:00:00Z"), 1, 0));
        assertThat(report.topRefused()).containsExactly(new WhatIfReport.ClientTotal("a", 8, 6));
        assertThat(report.costAssumed()).isTrue();
    }

    @Test
    void admittedTrafficLeavesOutWhatTheRulesInForceRefusedAsShadowModeDoes() {
        Limit two = TokenBucketLimit.of("proposed", 2, 1, Duration.ofHours(1));
        Map<WhatIfReplay.Traffic, WhatIfReport> reports = new HashMap<>();
        for (WhatIfReplay.Traffic traffic : WhatIfReplay.Traffic.values()) {
            WhatIfReplay replay = new WhatIfReplay(rule(Match.ANY, List.of(Dimension.API_KEY), two, Scope.REGIONAL),
                    ClientIdKeyring.unkeyed(), traffic);
            for (int i = 0; i < 4; i++) {
                DecisionEvent.Verdict verdict = i % 2 == 0 ? DecisionEvent.Verdict.DENIED
                        : DecisionEvent.Verdict.ALLOWED;
                replay.replay(new DecisionEvent(START.plusSeconds(i), "a", "free", "api", "default", verdict,
                        "evaluated", "store", null, -1, -1, List.of(), null, null, "gw-1", "eu"));
            }
            reports.put(traffic, replay.report(5));
        }
        assertThat(reports.get(WhatIfReplay.Traffic.ARRIVALS).refused()).isEqualTo(2);
        assertThat(reports.get(WhatIfReplay.Traffic.ADMITTED).refused()).isZero();
        assertThat(reports.get(WhatIfReplay.Traffic.ADMITTED).refusedInForce()).isEqualTo(2);
        assertThat(reports.get(WhatIfReplay.Traffic.ADMITTED).matched()).isEqualTo(2);
    }

    @Test
    void eachRegionHoldsTheWholeLimitOfARegionalRuleAndSharesOneBucketOfAGlobalOne() {
        Limit one = TokenBucketLimit.of("proposed", 1, 1, Duration.ofHours(1));
        for (Scope scope : Scope.values()) {
            WhatIfReplay replay = new WhatIfReplay(rule(Match.ANY, List.of(Dimension.API_KEY), one, scope),
                    ClientIdKeyring.unkeyed());
            replay.replay(event(START, "a", "api", "eu"));
            replay.replay(event(START.plusMillis(1), "a", "api", "us"));
            assertThat(replay.report(5).refused()).as(scope.name()).isEqualTo(scope == Scope.REGIONAL ? 0 : 1);
        }
    }

    @Test
    void whatEventsDoNotRecordIsCountedAsNotJudgedNeverGuessed() {
        Limit limit = SlidingWindowLimit.of("proposed", 1, Duration.ofMinutes(1));
        Match byPath = new Match(Set.of(), List.of("/api/**"), Set.of(), Set.of(), Set.of());
        WhatIfReplay paths = new WhatIfReplay(rule(byPath, List.of(Dimension.API_KEY), limit, Scope.REGIONAL),
                ClientIdKeyring.unkeyed());
        WhatIfReplay users = new WhatIfReplay(rule(Match.ANY, List.of(Dimension.USER), limit, Scope.REGIONAL),
                ClientIdKeyring.unkeyed());
        for (WhatIfReplay replay : List.of(paths, users)) {
            replay.replay(event(START, "a", "api", "eu"));
            replay.replay(event(START.plusSeconds(1), "a", "api", "eu"));
        }
        assertThat(paths.report(5).unjudged()).containsExactly(Map.entry("path", 2L));
        assertThat(users.report(5).unjudged()).containsExactly(Map.entry("user", 2L));
        assertThat(paths.report(5).matched()).isZero();
    }

    @Test
    void aCustomerOverrideMatchesItsClientByTheHashedKeyAndNobodyElse() {
        ClientIdKeyring keyring = ClientIdKeyring.unkeyed();
        String acme = keyring.current().of("acme-key");
        Match acmeOnly = new Match(Set.of(), List.of(), Set.of(), Set.of(), Set.of("acme-key"));
        WhatIfReplay replay = new WhatIfReplay(rule(acmeOnly, List.of(Dimension.API_KEY),
                SlidingWindowLimit.of("proposed", 1, Duration.ofMinutes(1)), Scope.REGIONAL), keyring);
        List<DecisionEvent> events = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            events.add(event(START.plusSeconds(i), acme, "api", "eu"));
            events.add(event(START.plusSeconds(i), keyring.current().of("other"), "api", "eu"));
        }
        events.forEach(replay::replay);
        WhatIfReport report = replay.report(5);
        assertThat(report.matched()).isEqualTo(3);
        assertThat(report.notMatched()).isEqualTo(3);
        assertThat(report.topRefused()).containsExactly(new WhatIfReport.ClientTotal(acme, 3, 2));
    }

    @Test
    void refusesEventsOutOfTimeOrderAndRulesThatCapRequestsInProgress() {
        WhatIfReplay replay = new WhatIfReplay(rule(Match.ANY, List.of(Dimension.API_KEY),
                SlidingWindowLimit.of("proposed", 1, Duration.ofMinutes(1)), Scope.REGIONAL),
                ClientIdKeyring.unkeyed());
        replay.replay(event(START.plusSeconds(1), "a", "api", "eu"));
        assertThatThrownBy(() -> replay.replay(event(START, "a", "api", "eu")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("time order");
        assertThatThrownBy(() -> new WhatIfReplay(rule(Match.ANY, List.of(Dimension.API_KEY),
                ConcurrencyLimit.of("proposed", 3, Duration.ofSeconds(30)), Scope.REGIONAL), ClientIdKeyring.unkeyed()))
                .isInstanceOf(InvalidLimitException.class).hasMessageContaining("in progress");
    }

    @Test
    void aCalendarQuotaIsReplayedPerDayInItsZoneWholeAgainAtMidnight() {
        // 3 a day in Berlin (UTC+1 in December): midnight there is 23:00 UTC
        Rule rule = rule(Match.ANY, List.of(Dimension.API_KEY),
                CalendarQuotaLimit.of("proposed.", 3, "day", "Europe/Berlin", null, null), Scope.REGIONAL);
        WhatIfReplay replay = new WhatIfReplay(rule, ClientIdKeyring.unkeyed());
        Instant evening = Instant.parse("2026-12-01T22:00:00Z");
        for (int i = 0; i < 5; i++) {
            replay.replay(event(evening.plusSeconds(i), "a", "api", "eu"));
        }
        Instant afterMidnight = Instant.parse("2026-12-01T23:00:00Z");
        for (int i = 0; i < 4; i++) {
            replay.replay(event(afterMidnight.plusSeconds(i), "a", "api", "eu"));
        }
        WhatIfReport report = replay.report(1);
        assertThat(report.clientHours()).containsExactlyInAnyOrder(
                new WhatIfReport.ClientHour("a", Instant.parse("2026-12-01T22:00:00Z"), 5, 2),
                new WhatIfReport.ClientHour("a", Instant.parse("2026-12-01T23:00:00Z"), 4, 1));
    }
}
