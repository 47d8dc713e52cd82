package dev.ratelimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Which rules a usage query reads and which buckets: the ones the evaluator spends from for a request with the same
 * values (checked by spending through the evaluator and reading back, on the in-memory store and its clock), the
 * client named by its key or by its client id alike; rules needing a value not given are skipped with the parameter
 * that would include them; other clients' overrides are never named; reading never makes a bucket.
 */
class UsageLookupTest {

    private static final TokenBucketLimit TEN_PER_HOUR = new TokenBucketLimit(10, 10, Duration.ofHours(1));

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final LocalBucketStore store = new LocalBucketStore(1_000, nanos::get);
    private final ClientIds clientIds = ClientIds.unkeyed();
    private final Clock clock = Clock.fixed(Instant.parse("2026-12-05T12:00:00Z"), ZoneOffset.UTC);

    private static Rule rule(String id, Match match, Limit limit, Dimension... key) {
        return new Rule(id, id, match, List.of(key), limit, 0, Mode.ENFORCE, FailureMode.OPEN);
    }

    private static Match routes(String... ids) {
        return new Match(Set.of(ids), List.of(), Set.of(), Set.of(), Set.of());
    }

    private final RuleSet rules = RuleSet.builder("free")
            .rule(rule("free.default", Match.ANY, TEN_PER_HOUR, Dimension.API_KEY))
            .rule(rule("acme-only", new Match(Set.of(), List.of(), Set.of(), Set.of(), Set.of("acme-key-0001")),
                    TEN_PER_HOUR, Dimension.API_KEY))
            .rule(rule("per-user", Match.ANY, new SlidingWindowLimit(5, Duration.ofMinutes(1)), Dimension.USER))
            .rule(rule("search-cap", routes("search"), TEN_PER_HOUR, Dimension.ROUTE))
            .rule(rule("reports", routes("reports"), new ConcurrencyLimit(2, Duration.ofSeconds(30)),
                    Dimension.API_KEY))
            .build();

    private final RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, store, clientIds);
    private final UsageLookup lookup = new UsageLookup(() -> rules, clientIds, null, store, clock);

    private void spend(String apiKey, String user, String route, int times) {
        for (int i = 0; i < times; i++) {
            Verdict verdict = evaluator.check(new RequestAttributes(apiKey, user, null, null, route, "/x", "default",
                    "free", 1), new RequestPermits()).block();
            assertThat(verdict.allowed()).isTrue();
        }
    }

    private Usage read(UsageQuery query) {
        return lookup.read(query).block();
    }

    private static Usage.RuleUsage usageOf(Usage usage, String id) {
        return usage.rules().stream().filter(used -> used.rule().id().equals(id)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + id + " in " + usage));
    }

    @Test
    void readsTheBucketsTheEvaluatorSpentFromByKeyOrByClientId() {
        spend("some-key-0001", "ann", "search", 3);
        Usage byKey = read(new UsageQuery("some-key-0001", null, "ann", null, null, null, null, null, null, null));
        assertThat(usageOf(byKey, "free.default").reading().remaining()).isEqualTo(7);
        assertThat(usageOf(byKey, "free.default").resetAfter()).isEqualTo(Duration.ofMinutes(18));
        assertThat(usageOf(byKey, "free.default").resetAt()).isEqualTo(Instant.parse("2026-12-05T12:18:00Z"));
        assertThat(usageOf(byKey, "per-user").reading().remaining()).isEqualTo(2);
        assertThat(byKey.skipped()).extracting(skipped -> skipped.rule().id())
                .containsExactlyInAnyOrder("search-cap", "reports");

        Usage byId = read(new UsageQuery(null, clientIds.of("some-key-0001"), null, null, null, null, null, null,
                null, null));
        assertThat(usageOf(byId, "free.default").reading().remaining()).isEqualTo(7);
        assertThat(byId.skipped()).extracting(skipped -> skipped.rule().id())
                .containsExactlyInAnyOrder("per-user", "search-cap", "reports");

        Usage onSearch = read(new UsageQuery("some-key-0001", null, null, null, null, "search", null, null, null,
                null));
        assertThat(usageOf(onSearch, "search-cap").reading().remaining()).isEqualTo(7);
        assertThat(usageOf(onSearch, "search-cap").shared()).isTrue();
    }

    @Test
    void refillIsReadAsTheStoreWouldDecideIt() {
        spend("some-key-0001", null, "other", 4);
        nanos.addAndGet(Duration.ofMinutes(12).toNanos()); // two tokens back
        Usage usage = read(new UsageQuery("some-key-0001", null, null, null, null, null, null, null, null, null));
        assertThat(usageOf(usage, "free.default").reading().remaining()).isEqualTo(8);
        assertThat(usageOf(usage, "free.default").resetAfter()).isEqualTo(Duration.ofMinutes(12));
    }

    @Test
    void anOverrideIsReadForItsClientAndNeverNamedForAnother() {
        Usage acme = read(new UsageQuery("acme-key-0001", null, null, null, null, null, null, null, null, null));
        assertThat(acme.rules()).extracting(used -> used.rule().id()).contains("acme-only");
        Usage acmeById = read(new UsageQuery(null, clientIds.of("acme-key-0001"), null, null, null, null, null, null,
                null, null));
        assertThat(acmeById.rules()).extracting(used -> used.rule().id()).contains("acme-only");
        Usage other = read(new UsageQuery("some-key-0001", null, null, null, null, null, null, null, null, null));
        assertThat(other.rules()).extracting(used -> used.rule().id()).doesNotContain("acme-only");
        assertThat(other.skipped()).extracting(skipped -> skipped.rule().id()).doesNotContain("acme-only");
    }

    @Test
    void readingMakesNoBucketAndAnUnseenClientIsWhole() {
        long before = store.size();
        for (int i = 0; i < 100; i++) {
            Usage usage = read(new UsageQuery("never-seen-" + i, null, "u" + i, null, null, "reports", null, null,
                    null, null));
            assertThat(usageOf(usage, "free.default").reading()).isEqualTo(BucketReading.untouched(TEN_PER_HOUR));
            assertThat(usageOf(usage, "reports").reading().inProgress()).isZero();
        }
        assertThat(store.size()).isEqualTo(before);
    }

    @Test
    void aConcurrencyRuleReadsThePermitsInProgress() {
        RequestPermits permits = new RequestPermits();
        evaluator.check(new RequestAttributes("some-key-0001", null, null, null, "reports", "/r", "default", "free",
                1), permits).block();
        Usage usage = read(new UsageQuery("some-key-0001", null, null, null, null, "reports", null, null, null,
                null));
        assertThat(usageOf(usage, "reports").reading().inProgress()).isEqualTo(1);
        assertThat(usageOf(usage, "reports").reading().remaining()).isEqualTo(1);
        permits.end();
        assertThat(usageOf(read(new UsageQuery("some-key-0001", null, null, null, null, "reports", null, null, null,
                null)), "reports").reading().inProgress()).isZero();
    }

    @Test
    void aGlobalRuleIsReadAsThisRegionsShareAndASplitRuleAsTheCallersShard() {
        Rule global = new Rule("global", "global", Match.ANY, List.of(Dimension.API_KEY),
                new TokenBucketLimit(1_000, 1_000, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.OPEN,
                StoreMode.EXACT, 1, null, Scope.GLOBAL);
        Rule sharded = new Rule("sharded", "sharded", Match.ANY, List.of(Dimension.TENANT),
                new TokenBucketLimit(100, 100, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.OPEN,
                StoreMode.EXACT, 4);
        RuleSet regional = RuleSet.builder("free").rule(global).rule(sharded).build();
        RegionShares shares = new RegionShares("eu", java.util.Map.of("eu", 1.0, "us", 3.0));
        RateLimitEvaluator inRegion = new RateLimitEvaluator(() -> regional, store, clientIds, shares);
        UsageLookup regionalLookup = new UsageLookup(() -> regional, clientIds, shares, store, clock);
        for (int i = 0; i < 3; i++) {
            assertThat(inRegion.check(new RequestAttributes("some-key-0001", null, "acme", null, "r", "/x",
                    "default", "free", 1), new RequestPermits()).block().allowed()).isTrue();
        }

        Usage usage = regionalLookup.read(new UsageQuery("some-key-0001", null, null, "acme", null, null, null, null,
                null, null)).block();

        Usage.RuleUsage share = usageOf(usage, "global");
        assertThat(share.limit().quota()).as("eu's quarter").isEqualTo(250);
        assertThat(share.reading().remaining()).isEqualTo(247);
        Usage.RuleUsage shard = usageOf(usage, "sharded");
        assertThat(shard.limit().quota()).isEqualTo(25);
        assertThat(shard.reading().remaining()).as("the caller's own shard, where it spent").isEqualTo(22);
    }

    @Test
    void anUnknownRuleOrNoIdentityIsRefused() {
        assertThatThrownBy(() -> read(new UsageQuery("some-key-0001", null, null, null, null, null, null, null, null,
                "nope"))).isInstanceOfSatisfying(UsageQueryException.class,
                        ex -> assertThat(ex.kind()).isEqualTo(UsageQueryException.Kind.UNKNOWN_RULE));
        assertThatThrownBy(() -> new UsageQuery(null, null, null, null, null, "search", null, null, null, null))
                .isInstanceOfSatisfying(UsageQueryException.class,
                        ex -> assertThat(ex.kind()).isEqualTo(UsageQueryException.Kind.INVALID));
        assertThatThrownBy(() -> new UsageQuery(null, "not a client id", null, null, null, null, null, null, null,
                null)).isInstanceOf(UsageQueryException.class);
    }

    @Test
    void aClientAnAbuseScoreLowersIsReadWithTheLoweredLimitsAndTheScore() {
        AbuseScores abuse = new AbuseScores(new AbuseScores.Settings(0.1, Duration.ofHours(1), 100, Set.of(),
                Set.of()), clock);
        String client = clientIds.of("some-key-0001");
        abuse.apply(client, new AbuseScore(null, 0.5, "test", clock.instant(), null));
        RateLimitEvaluator lowered = new RateLimitEvaluator(() -> rules, store, clientIds, null, abuse);
        UsageLookup abuseLookup = new UsageLookup(() -> rules, clientIds, null, abuse, store, clock);
        for (int i = 0; i < 2; i++) {
            assertThat(lowered.check(new RequestAttributes("some-key-0001", null, null, null, "other", "/x",
                    "default", "free", 1), new RequestPermits()).block().allowed()).isTrue();
        }
        Usage usage = abuseLookup.read(new UsageQuery("some-key-0001", null, null, null, null, null, null, null,
                null, null)).block();
        assertThat(usage.abuse()).as("the score shown").isNotNull();
        assertThat(usage.abuse().factor()).isEqualTo(0.5);
        assertThat(usageOf(usage, "free.default").limit().quota()).as("10 an hour, halved").isEqualTo(5);
        assertThat(usageOf(usage, "free.default").reading().remaining()).as("5, 2 spent").isEqualTo(3);

        Usage other = abuseLookup.read(new UsageQuery("other-key-0002", null, null, null, null, null, null, null,
                null, null)).block();
        assertThat(other.abuse()).as("a client without a score").isNull();
        assertThat(usageOf(other, "free.default").limit().quota()).isEqualTo(10);
    }
}
