package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.autoconfigure.rules.PropertyRuleDefinitions;
import dev.ratelimiter.autoconfigure.rules.RuleView;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleChange;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuleSync;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runtime overrides reach the rule store with hashed API keys only, are matched by client id, and tell the operator
 * when a key needs posting again; on an in-memory store (the Redis round trip is {@code ApiKeysInRedisTest}'s).
 */
@ExtendWith(OutputCaptureExtension.class)
class StoredApiKeysTest {

    static final ClientIds CURRENT = ClientIds.keyed("s", "the-current-secret-0123456789");
    static final ClientIds PREVIOUS = ClientIds.keyed("s", "the-previous-secret-0123456789");

    private final InMemoryRuleStore store = new InMemoryRuleStore();
    private final List<RuleSync> syncs = new ArrayList<>();

    @AfterEach
    void stop() {
        syncs.forEach(RuleSync::stop);
    }

    @Test
    void anOverrideIsStoredWithItsKeysHashedUnderTheCurrentSecretAndStillApplies() {
        RuleAdmin admin = admin(ClientIdKeyring.of(CURRENT, PREVIOUS));
        assertThat(admin.put("acme", override("acme-key,globex-key")).outcome().code()).isEqualTo(200);

        Map<String, String> stored = store.load().block().specs().get("acme");
        assertThat(stored.toString()).doesNotContain("acme-key").doesNotContain("globex-key");
        assertThat(stored).doesNotContainKey("match.apiKeys").containsEntry("match.api-keys",
                CURRENT.hashed("acme-key") + "," + CURRENT.hashed("globex-key"));
        assertThat(appliesTo(admin, "acme-key")).containsExactly("acme");
        assertThat(appliesTo(admin, "globex-key")).containsExactly("acme");
        assertThat(appliesTo(admin, "initech-key")).containsExactly("free.default");
    }

    @Test
    void everyWayOfNamingTheKeysIsReplacedByTheHashedList() {
        RuleAdmin admin = admin(ClientIdKeyring.of(CURRENT, null));
        Map<String, Object> settings = new LinkedHashMap<>(override(null));
        settings.put("match", Map.of("api-keys", List.of("acme-key", "globex-key")));
        assertThat(admin.put("acme", settings).outcome().code()).isEqualTo(200);
        assertThat(store.load().block().specs().get("acme")).doesNotContainKeys("match.api-keys[0]",
                "match.api-keys[1]").containsEntry("match.api-keys",
                        CURRENT.hashed("acme-key") + "," + CURRENT.hashed("globex-key"));
    }

    @Test
    void theViewShowsHashedKeysThatCanBePostedBackAsTheyAre() {
        ClientIdKeyring keyring = ClientIdKeyring.of(CURRENT, null);
        RuleAdmin admin = admin(keyring);
        RuleView view = new RuleView(syncs.get(0), keyring); // the admin's own sync
        admin.put("acme", override("acme-key"));
        Rule rule = admin.rulesInForce().rules().get("acme");
        Object shown = ((Map<?, ?>) view.describe(rule).get("match")).get("apiKeys");
        assertThat(shown).isEqualTo(List.of(CURRENT.hashed("acme-key").toString()));
        assertThat(view.describe().toString()).doesNotContain("acme-key");

        Map<String, String> before = store.load().block().specs().get("acme");
        Map<String, Object> roundTrip = override(((List<?>) shown).stream().map(String::valueOf)
                .collect(java.util.stream.Collectors.joining(",")));
        roundTrip.put("capacity", 40);
        assertThat(admin.put("acme", roundTrip).outcome().code()).isEqualTo(200);
        assertThat(store.load().block().specs().get("acme")).containsEntry("capacity", "40")
                .containsEntry("match.api-keys", before.get("match.api-keys"));
        assertThat(appliesTo(admin, "acme-key")).containsExactly("acme");
    }

    @Test
    void aKeyHashedUnderThePreviousSecretIsAcceptedOneUnderAnUnknownSecretOrMistypedIsRefused() {
        RuleAdmin admin = admin(ClientIdKeyring.of(CURRENT, PREVIOUS));
        assertThat(admin.put("acme", override(PREVIOUS.hashed("acme-key").toString())).outcome().code()).isEqualTo(200);
        assertThat(appliesTo(admin, "acme-key")).containsExactly("acme");

        ClientIds unknown = ClientIds.keyed("s", "a-secret-nobody-here-has-0123");
        RuleChange refused = admin.put("globex", override(unknown.hashed("globex-key").toString()));
        assertThat(refused.outcome().code()).isEqualTo(400);
        assertThat(refused.field()).isEqualTo("ratelimit.rules.globex.match.api-keys");
        assertThat(refused.reason().toString()).contains("hashed under a secret this instance does not "
                + "have (" + unknown.scheme() + ", the current one is " + CURRENT.scheme() + ")");

        RuleChange mistyped = admin.put("globex", override("hmac:" + CURRENT.scheme().substring(5) + ":short"));
        assertThat(mistyped.outcome().code()).isEqualTo(400);
        assertThat(mistyped.reason().toString()).contains("starts like a hashed API key but is not one");
        assertThat(store.load().block().specs()).containsOnlyKeys("acme");
    }

    @Test
    void overridesThatNeedPostingAgainAreWarnedOnceAndListed(CapturedOutput output) {
        // Written by earlier releases (as sent), before a secret (unkeyed) and under the previous and a lost secret.
        ClientIds lost = ClientIds.keyed("s", "a-secret-nobody-here-has-0123");
        put("legacy", "legacy-key");
        put("unkeyed", ClientIds.unkeyed().hashed("unkeyed-key").toString());
        put("rotating", PREVIOUS.hashed("rotating-key").toString());
        put("lost", lost.hashed("lost-key").toString());
        put("fine", CURRENT.hashed("fine-key").toString());
        RuleSync sync = sync(ClientIdKeyring.of(CURRENT, PREVIOUS));

        assertThat(sync.apiKeyNotes()).containsOnlyKeys("legacy", "unkeyed", "rotating", "lost");
        assertThat(sync.apiKeyNotes().get("lost")).startsWith("1 API key(s) hashed under a secret this instance does "
                + "not have (" + lost.scheme() + "), matching no request");
        assertThat(sync.apiKeyNotes().get("rotating"))
                .startsWith("1 API key(s) matched only through ratelimit.client-id.previous-secret");
        assertThat(sync.apiKeyNotes().get("unkeyed")).startsWith("1 API key(s) hashed without a secret");
        assertThat(sync.apiKeyNotes().get("legacy")).startsWith("1 API key(s) stored as sent")
                .endsWith("Post the rule again with its API keys as sent in requests, to store them hashed under the "
                        + "current secret.").doesNotContain("legacy-key");
        Map.of("legacy-key", "legacy", "unkeyed-key", "unkeyed", "rotating-key", "rotating").forEach((key, id) ->
                assertThat(sync.rulesInForce().applicableTo(request(key))).extracting(Rule::id).as(key + " still matches")
                        .contains(id));
        assertThat(sync.rulesInForce().applicableTo(request("lost-key"))).extracting(Rule::id)
                .containsExactly("free.default");
        assertThat(sync.rulesInForce().unmatchedApiKeys()).isEqualTo(Map.of("lost", 1));

        sync.refresh().block(Duration.ofSeconds(5));
        store.putControl("kill-switch", "false").block();
        sync.refresh().block(Duration.ofSeconds(5));
        assertThat(output).containsOnlyOnce("Runtime rule 'lost': 1 API key(s) hashed under a secret")
                .containsOnlyOnce("Runtime rule 'legacy': 1 API key(s) stored as sent")
                .doesNotContain("legacy-key").doesNotContain("Runtime rule 'fine'");
    }

    private void put(String id, String apiKey) {
        store.putRule(id, Map.of("capacity", "3", "refill-tokens", "1", "refill-period", "1h", "group", id,
                "match.api-keys[0]", apiKey), RuleStore.ANY_VERSION).block();
    }

    @Test
    void aNameThatBindsToNoSettingIsRefusedAndNothingIsWritten() {
        RuleAdmin admin = admin(ClientIdKeyring.of(CURRENT, null));
        for (String misspelt : List.of("match.api.keys", "match[api-keys]", "match[api-keys][0]", "match.api-keys.0.x",
                "capacitty")) {
            Map<String, Object> settings = override(null);
            settings.put(misspelt, "RAW-SECRET-KEY");
            RuleChange result = admin.put("acme", settings);
            assertThat(result.outcome().code()).as(misspelt).isEqualTo(400);
            assertThat(result.reason().toString()).as(misspelt).contains("is not a rule setting")
                    .doesNotContain("RAW-SECRET-KEY");
        }
        assertThat(store.load().block().specs()).doesNotContainKey("acme");
    }

    @Test
    void theBucketOfUnknownKeysIsNotARuntimeRule() {
        RuleAdmin admin = admin(ClientIdKeyring.of(CURRENT, null));
        RuleChange result = admin.put(dev.ratelimiter.core.RuleSet.UNKNOWN_KEYS, Map.of("enabled", "false"));
        assertThat(result.outcome().code()).isEqualTo(400);
        assertThat(result.reason().toString()).contains("ratelimit.api-key.unknown.limit");
        assertThat(store.load().block().specs()).isEmpty();
    }

    private static Map<String, Object> override(String apiKeys) {
        Map<String, Object> settings = new LinkedHashMap<>(Map.of("group", "tier-default", "capacity", 20,
                "refillTokens", 20, "refillPeriod", "1h"));
        if (apiKeys != null) {
            settings.put("match.apiKeys", apiKeys);
        }
        return settings;
    }

    private RuleAdmin admin(ClientIdKeyring keyring) {
        RuleSetFactory factory = factory(keyring);
        return new RuleAdmin(store, sync(factory), factory);
    }

    private RuleSync sync(ClientIdKeyring keyring) {
        return sync(factory(keyring));
    }

    private RuleSync sync(RuleSetFactory factory) {
        RuleSync sync = new RuleSync(store, factory, new RuleSetHolder(factory.configured()), Duration.ofHours(1));
        sync.start();
        syncs.add(sync);
        return sync;
    }

    private static RuleSetFactory factory(ClientIdKeyring keyring) {
        return new RuleSetFactory(new PropertyRuleDefinitions(RuleAdminRaceTest.properties(), keyring));
    }

    private static List<String> appliesTo(RuleAdmin admin, String apiKey) {
        return admin.rulesInForce().applicableTo(request(apiKey)).stream().map(Rule::id).toList();
    }

    private static RequestAttributes request(String apiKey) {
        return new RequestAttributes(apiKey, null, null, null, "api", "/x", "default", "free", 1);
    }
}
