package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static dev.ratelimiter.core.Fixtures.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Customer overrides and tier lists find a request by its client id, whichever known secret their keys were hashed under. */
class CustomerOverrideKeysTest {

    private final ClientIds current = ClientIds.keyed("s", "the-current-secret-0123456789");
    private final ClientIds previous = ClientIds.keyed("s", "the-previous-secret-0123456789");
    private final Limit tenPerSecond = TokenBucketLimit.of("t.", 10, 10, Duration.ofSeconds(1));

    @Test
    void anOverrideListedAsSentAppliesToThatClientAlone() {
        RuleSet rules = withOverride(ClientIdKeyring.of(current, null), "acme-key");
        assertThat(ids(rules, "acme-key")).containsExactly("acme");
        assertThat(ids(rules, "globex-key")).containsExactly("default");
        assertThat(rules.unmatchedApiKeys()).isEmpty();
    }

    @Test
    void anOverrideHashedUnderTheCurrentSecretAppliesLikeOneListedAsSent() {
        RuleSet rules = withOverride(ClientIdKeyring.of(current, null), current.hashed("acme-key").toString());
        assertThat(ids(rules, "acme-key")).containsExactly("acme");
        assertThat(ids(rules, "globex-key")).containsExactly("default");
    }

    @Test
    void anOverrideHashedUnderThePreviousSecretAppliesOnlyWhileThatSecretIsGivenAndIsReportedWithout() {
        String underPrevious = previous.hashed("acme-key").toString();
        RuleSet rotating = withOverride(ClientIdKeyring.of(current, previous), underPrevious);
        assertThat(ids(rotating, "acme-key")).containsExactly("acme");
        assertThat(ids(rotating, "globex-key")).containsExactly("default");
        assertThat(rotating.unmatchedApiKeys()).isEmpty();

        RuleSet rotated = withOverride(ClientIdKeyring.of(current, null), underPrevious);
        assertThat(ids(rotated, "acme-key")).as("the previous secret is gone").containsExactly("default");
        assertThat(rotated.unmatchedApiKeys()).isEqualTo(Map.of("acme", 1));
    }

    @Test
    void anOverrideHashedBeforeASecretWasSetStillApplies() {
        String unkeyed = ClientIds.unkeyed().hashed("acme-key").toString();
        assertThat(unkeyed).startsWith("sha256:");
        RuleSet rules = withOverride(ClientIdKeyring.of(current, null), unkeyed);
        assertThat(ids(rules, "acme-key")).containsExactly("acme");
        assertThat(ids(rules, "globex-key")).containsExactly("default");
    }

    @Test
    void anOverrideWithKeysUnderTwoSecretsAppliesToBothClients() {
        RuleSet rules = withOverride(ClientIdKeyring.of(current, previous), previous.hashed("acme-key").toString(),
                current.hashed("globex-key").toString());
        assertThat(ids(rules, "acme-key")).containsExactly("acme");
        assertThat(ids(rules, "globex-key")).containsExactly("acme");
        assertThat(ids(rules, "initech-key")).containsExactly("default");
    }

    @Test
    void tierListsMatchByClientIdAndAKeyHashedOrAsSentIsOneKey() {
        ClientIdKeyring keyring = ClientIdKeyring.of(current, previous);
        RuleSet tiers = RuleSet.builder("free").clientIds(keyring).apiKey("acme-key", "pro")
                .apiKey(previous.hashed("globex-key").toString(), "pro").build();
        assertThat(tiers.tierOf("acme-key")).isEqualTo("pro");
        assertThat(tiers.tierOf("globex-key")).isEqualTo("pro");
        assertThat(tiers.tierOf("initech-key")).isEqualTo("free");
        assertThatThrownBy(() -> RuleSet.builder("free").clientIds(keyring).apiKey("acme-key", "pro")
                .apiKey(current.hashed("acme-key").toString(), "gold").build())
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("listed under both ratelimit.tiers.pro.api-keys and ratelimit.tiers.gold.api-keys");
    }

    @Test
    void aTierKeyHashedUnderASecretThisInstanceLacksIsRefused() {
        assertThatThrownBy(() -> RuleSet.builder("free").clientIds(ClientIdKeyring.of(current, null))
                .apiKey(previous.hashed("acme-key").toString(), "pro").build())
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("ratelimit.tiers.pro.api-keys has a key hashed under a secret this instance "
                        + "does not have (" + previous.scheme() + ")")
                .hasMessageContaining("ratelimit.client-id.previous-secret");
    }

    @Test
    void aValueThatLooksHashedButIsNotIsRefusedWithoutEchoingIt() {
        assertThatThrownBy(() -> new Match(Set.of(), List.of(), Set.of(), Set.of(), Set.of("hmac:1234:tooShort")))
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("starts like a hashed API key but is not one")
                .hasMessageNotContaining("tooShort");
    }

    @Test
    void twoOverridesOfOneCustomerInOneGroupAreTwinsHashedOrNot() {
        assertThatThrownBy(() -> RuleSet.builder("free").clientIds(ClientIdKeyring.of(current, null))
                .rule(override("a", "acme-key")).rule(override("b", current.hashed("acme-key").toString())).build())
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("Rules 'a' and 'b' are in the same group");
    }

    @Test
    void twoSecretsGiveEveryBucketAnotherKey() {
        Rule perClient = override("per-client");
        Rule perRoute = new Rule("per-route", "per-route", Match.ANY, List.of(Dimension.ROUTE), tenPerSecond, 0,
                Mode.ENFORCE, FailureMode.LOCAL);
        RequestAttributes request = request("acme-key", "free", "default");
        for (Rule rule : List.of(perClient, perRoute)) {
            BucketKey underCurrent = RateLimitEvaluator.bucketOf(current, rule, request);
            BucketKey underPrevious = RateLimitEvaluator.bucketOf(previous, rule, request);
            assertThat(underCurrent.partition()).isNotEqualTo(underPrevious.partition())
                    .isNotEqualTo(RateLimitEvaluator.bucketOf(ClientIds.unkeyed(), rule, request).partition());
            assertThat(underCurrent.name()).isEqualTo(underPrevious.name());
        }
        assertThat(RateLimitEvaluator.bucketOf(current, perClient, request).partition())
                .isEqualTo(current.of("acme-key"));
    }

    private RuleSet withOverride(ClientIdKeyring keyring, String... apiKeys) {
        return RuleSet.builder("free").clientIds(keyring).rule(override("default"))
                .rule(override("acme", apiKeys)).build();
    }

    private Rule override(String id, String... apiKeys) {
        return new Rule(id, "tier-default", new Match(Set.of(), List.of(), Set.of(), Set.of(), Set.of(apiKeys)),
                List.of(Dimension.API_KEY), tenPerSecond, 0, Mode.ENFORCE, FailureMode.LOCAL);
    }

    private static List<String> ids(RuleSet rules, String apiKey) {
        return rules.applicableTo(request(apiKey, "free", "default")).stream().map(Rule::id).toList();
    }
}
