package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static dev.ratelimiter.core.Fixtures.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RuleSetTest {

    private final Limit tenPerSecond = TokenBucketLimit.of("t.", 10, 10, Duration.ofSeconds(1));

    private Rule rule(String id, String group, Match match, Dimension... key) {
        return new Rule(id, group, match, List.of(key.length == 0 ? new Dimension[] { Dimension.API_KEY } : key),
                tenPerSecond, 0, Mode.ENFORCE, FailureMode.LOCAL);
    }

    private Match match(Set<String> routeIds, Set<String> routeClasses, Set<String> tiers, Set<String> apiKeys) {
        return new Match(routeIds, List.of(), routeClasses, tiers, apiKeys);
    }

    @Test
    void mostSpecificRuleOfAGroupAppliesAndEveryGroupApplies() {
        RuleSet rules = RuleSet.builder("free")
                .rule(rule("free.default", "tier-default", match(Set.of(), Set.of(), Set.of("free"), Set.of())))
                .rule(rule("free.reports", "tier-default", match(Set.of(), Set.of("reports"), Set.of("free"), Set.of())))
                .rule(rule("acme", "tier-default", match(Set.of(), Set.of(), Set.of(), Set.of("acme-key"))))
                .rule(rule("hourly", "hourly", match(Set.of(), Set.of(), Set.of("free"), Set.of())))
                .rule(rule("login-cap", "login-cap", match(Set.of("login"), Set.of(), Set.of(), Set.of()), Dimension.ROUTE))
                .build();
        assertThat(ids(rules, request("k", "free", "default"))).containsExactly("free.default", "hourly");
        assertThat(ids(rules, request("k", "free", "reports"))).containsExactly("free.reports", "hourly");
        assertThat(ids(rules, request("acme-key", "free", "reports"))).containsExactly("acme", "hourly");
        RequestAttributes login = new RequestAttributes("k", null, null, null, "login", "/login", "default", "free", 1);
        assertThat(ids(rules, login)).containsExactly("free.default", "hourly", "login-cap");
    }

    @Test
    void aRuleThatSkipsRequestsLackingAValueDoesNotApplyToThem() {
        Rule skipping = new Rule("per-tenant", "per-tenant", Match.ANY, List.of(Dimension.TENANT), tenPerSecond, 0,
                Mode.ENFORCE, FailureMode.LOCAL, StoreMode.EXACT, 1, WhenMissing.SKIP);
        RuleSet rules = RuleSet.builder("free").rule(skipping).build();
        assertThat(ids(rules, request("k", "free", "default"))).isEmpty();
        RequestAttributes withTenant = new RequestAttributes("k", null, "t1", null, "api", "/x", "default", "free", 1);
        assertThat(ids(rules, withTenant)).containsExactly("per-tenant");
    }

    @Test
    void aCapByTenantUserOrAddressAppliesToRequestsLackingItByDefault() {
        RuleSet rules = RuleSet.builder("free")
                .rule(rule("per-tenant", "per-tenant", Match.ANY, Dimension.TENANT))
                .rule(rule("per-user", "per-user", Match.ANY, Dimension.USER))
                .rule(rule("per-address", "per-address", Match.ANY, Dimension.CLIENT_IP))
                .rule(rule("per-key", "per-key", Match.ANY, Dimension.API_KEY))
                .build();
        assertThat(rules.rules().get("per-tenant").whenMissing()).isEqualTo(WhenMissing.SHARED);
        // an address the server reports as none (a forwarding header's "x") must not escape a per-address cap
        assertThat(rules.rules().get("per-address").whenMissing()).isEqualTo(WhenMissing.SHARED);
        assertThat(rules.rules().get("per-key").whenMissing()).isEqualTo(WhenMissing.SKIP);
        RequestAttributes keyless = new RequestAttributes(null, null, null, null, "api", "/x", "default", "free", 1);
        assertThat(ids(rules, keyless)).containsExactly("per-tenant", "per-user", "per-address");
    }

    @Test
    void pathGlobsMatchWithinAndAcrossSegments() {
        RuleSet rules = RuleSet.builder("free")
                .rule(new Rule("orders", "orders", new Match(Set.of(), List.of("/users/*/orders"), Set.of(), Set.of(),
                        Set.of()), List.of(Dimension.API_KEY), tenPerSecond, 0, Mode.ENFORCE, FailureMode.LOCAL))
                .build();
        RequestAttributes hit = new RequestAttributes("k", null, null, null, "api", "/users/42/orders", "default", "free", 1);
        RequestAttributes miss = new RequestAttributes("k", null, null, null, "api", "/users/42/x/orders", "default",
                "free", 1);
        assertThat(ids(rules, hit)).containsExactly("orders");
        assertThat(ids(rules, miss)).isEmpty();
    }

    @Test
    void twoRulesOfOneGroupWithTheSameMatchAreRefused() {
        assertThatThrownBy(() -> RuleSet.builder("free")
                .rule(rule("a", "g", Match.ANY))
                .rule(rule("b", "g", Match.ANY))
                .build())
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("Rules 'a' and 'b' are in the same group 'g'");
    }

    @Test
    void aKeyBelongsToOneTier() {
        assertThatThrownBy(() -> RuleSet.builder("free").apiKey("acme", "free").apiKey("acme", "pro").build())
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("ratelimit.tiers.free.api-keys and ratelimit.tiers.pro.api-keys");
    }

    @Test
    void bucketsOfOneClientsRulesSharePartitionAndPerRouteCapsDoNot() {
        Rule perClient = rule("per-client", "a", Match.ANY);
        Rule perClientAndRoute = rule("per-client-route", "b", Match.ANY, Dimension.API_KEY, Dimension.ROUTE);
        Rule perRoute = rule("per-route", "c", Match.ANY, Dimension.ROUTE);
        RequestAttributes request = request("k", "free", "default");
        BucketKey a = RateLimitEvaluator.bucketOf(ClientIds.unkeyed(), perClient, request);
        BucketKey b = RateLimitEvaluator.bucketOf(ClientIds.unkeyed(), perClientAndRoute, request);
        BucketKey c = RateLimitEvaluator.bucketOf(ClientIds.unkeyed(), perRoute, request);
        assertThat(a.partition()).isEqualTo(ClientIds.unkeyed().of("k")).isEqualTo(b.partition());
        assertThat(b.name()).startsWith("per-client-route@t:");
        assertThat(a.name()).as("the rule id and the shape of its state").isEqualTo("per-client@t");
        assertThat(c.partition()).isNotEqualTo(a.partition());
        assertThat(RateLimitEvaluator.bucketOf(ClientIds.unkeyed(), perRoute, request("other-client", "free", "default")))
                .as("a per-route cap is one bucket for every client").isEqualTo(c);
    }

    @Test
    void badLimitValuesNameTheSettingAndTheValue() {
        assertThatThrownBy(() -> TokenBucketLimit.of("ratelimit.tiers.free.limits.default.", 0, 5, Duration.ofSeconds(1)))
                .isInstanceOf(InvalidLimitException.class)
                .hasMessage("ratelimit.tiers.free.limits.default.capacity must be at least 1 (the largest burst a "
                        + "client may send), but was 0.");
        assertThatThrownBy(() -> SlidingWindowLimit.of("r.", 100, Duration.ofMillis(10)))
                .hasMessageContaining("r.window must be a duration of at least 100ms");
    }

    private static List<String> ids(RuleSet rules, RequestAttributes request) {
        return rules.applicableTo(request).stream().map(Rule::id).toList();
    }

    @Test
    void anUnknownKeyGetsOnlyThePerAddressBucketAndKnownOnesAreThoseListedOrNamed() {
        Rule perAddress = new Rule(RuleSet.UNKNOWN_KEYS, RuleSet.UNKNOWN_KEYS, new Match(Set.of(), List.of(),
                Set.of(), Set.of(RuleSet.UNKNOWN_KEYS), Set.of()), List.of(Dimension.CLIENT_IP), tenPerSecond, 0,
                Mode.ENFORCE, FailureMode.LOCAL);
        RuleSet rules = RuleSet.builder("free")
                .apiKey("listed", "free")
                .rule(rule("free.default", "tier-default", match(Set.of(), Set.of(), Set.of("free"), Set.of())))
                .rule(rule("everyone", "everyone", Match.ANY))
                .rule(rule("acme", "tier-default", match(Set.of(), Set.of(), Set.of(), Set.of("acme-key"))))
                .rule(rule("route-cap", "route-cap", Match.ANY, Dimension.ROUTE))
                .rule(rule("per-ip", "per-ip", Match.ANY, Dimension.CLIENT_IP))
                .rule(rule("free-ip", "free-ip", match(Set.of(), Set.of(), Set.of("free"), Set.of()),
                        Dimension.CLIENT_IP))
                .unknownApiKeys(UnknownApiKeyPolicy.PER_ADDRESS, perAddress)
                .build();
        assertThat(rules.knows("listed")).isTrue();
        assertThat(rules.knows("acme-key")).isTrue();
        assertThat(rules.knows("junk")).isFalse();
        assertThat(rules.needsClientIp()).isTrue();
        RequestAttributes unknown = new RequestAttributes("junk", null, null, "192.0.2.1", "api", "/x", "default",
                RuleSet.UNKNOWN_KEYS, 1);
        // the address's bucket and every rule that keeps nothing per key and is no tier's: never more than no key
        assertThat(ids(rules, unknown)).containsExactlyInAnyOrder(RuleSet.UNKNOWN_KEYS, "route-cap", "per-ip");
        assertThat(ids(rules, request("listed", "free", "default"))).containsExactly("free.default", "everyone",
                "route-cap", "per-ip", "free-ip");
    }

    @Test
    void theUnknownKeysNameIsReservedForTiersAndRules() {
        assertThatThrownBy(() -> RuleSet.builder(RuleSet.UNKNOWN_KEYS)).isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("reserved");
        assertThatThrownBy(() -> RuleSet.builder("free").apiKey("k", RuleSet.UNKNOWN_KEYS))
                .isInstanceOf(InvalidLimitException.class).hasMessageContaining("reserved");
        assertThatThrownBy(() -> RuleSet.builder("free").rule(rule(RuleSet.UNKNOWN_KEYS, "g", Match.ANY)))
                .isInstanceOf(InvalidLimitException.class).hasMessageContaining("reserved");
        assertThatThrownBy(() -> RuleSet.builder("free").rule(rule("r", "g", match(Set.of(), Set.of(),
                Set.of(RuleSet.UNKNOWN_KEYS), Set.of())))).isInstanceOf(InvalidLimitException.class);
        assertThatThrownBy(() -> RuleSet.builder("free").unknownApiKeys(UnknownApiKeyPolicy.PER_ADDRESS,
                rule(RuleSet.UNKNOWN_KEYS, "g", Match.ANY))).isInstanceOf(IllegalArgumentException.class);
    }
}
