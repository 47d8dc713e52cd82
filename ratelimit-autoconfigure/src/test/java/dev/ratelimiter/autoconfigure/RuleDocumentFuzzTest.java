package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.ratelimiter.autoconfigure.rules.PropertyRuleDefinitions;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleChange;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.testsupport.property.Coverage;
import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rule documents as an operator (or an attacker with the operator's credentials) might post them: every setting the
 * endpoint takes, plus unknown ones, with values at every boundary — zero, negative, NaN, exponents, 30 digits, empty,
 * wrong types, durations out of range. Each is either refused with a 400 that names a field and says why, or becomes
 * a rule that is then in force; a refused document never replaces the valid rule of the same id, and nothing throws.
 */
class RuleDocumentFuzzTest {

    private static final List<String> SETTINGS = List.of("group", "key", "algorithm", "capacity", "refillTokens",
            "refillPeriod", "limit", "window", "maxInProgress", "lease", "cost", "mode", "failureMode", "storeMode",
            "shards", "whenMissing", "enabled", "match.routeIds", "match.paths", "match.routeClasses", "match.tiers",
            "match.apiKeys", "unknownField", "capacity.x", "match");

    private static final List<String> VALUES = List.of("0", "1", "-1", "2", "10", "1000", "1e3", "1E12", "1000000000000",
            "1000000000001", "999999999999999999999999999999", "NaN", "Infinity", "-Infinity", "1.5", "0x10", "", " ",
            "1s", "1h", "1d", "366d", "367d", "-1s", "0s", "1ms", "PT1H", "P1D", "abc", "true", "false", "token-bucket",
            "sliding-window", "concurrency", "TOKEN_BUCKET", "leaky", "shadow", "enforce", "open", "closed", "local",
            "exact", "api-key", "tenant", "user", "client-ip", "route", "api-key,tenant", "nope", "skip", "shared",
            "deny", "/api/**", "api/x", "/a,/b", "free", "{x}", "a\u0000b", "ключ", "*");

    private static InMemoryRuleStore store;
    private static RuleSync sync;
    private static RuleAdmin admin;
    private static RuleSetHolder holder;
    private static Rule keeper;

    @BeforeAll
    static void start() {
        RuleSetFactory factory = new RuleSetFactory(new PropertyRuleDefinitions(RuleAdminRaceTest.properties()));
        store = new InMemoryRuleStore();
        holder = new RuleSetHolder(factory.configured());
        sync = new RuleSync(store, factory, holder, Duration.ofHours(1));
        sync.start();
        admin = new RuleAdmin(store, sync, factory);
        RuleChange kept = admin.put("keeper", Map.of("capacity", "5", "refillTokens", "5", "refillPeriod", "1s"));
        assertThat(kept.outcome().code()).as(kept.toString()).isEqualTo(200);
        keeper = holder.get().rules().get("keeper");
        assertThat(keeper).isNotNull();
    }

    @AfterAll
    static void stop() {
        sync.stop();
    }

    /** A document posted under a new id or over the valid rule's. */
    record Post(Map<String, Object> document, boolean overTheKeeper) {
    }

    /**
     * Most documents are refused (94.4 % at the seed, 5.6 % accepted); enough must be accepted to reach the checks past
     * validation: at least 2 %, some 60 documents.
     */
    @TestFactory
    Stream<DynamicTest> everyDocumentIsRefusedNamingAFieldOrBecomesARuleInForce() {
        return Property.forAll(Gen.zip(documents(), Gen.booleans(), Post::new)).tries(3000).coverage(coverage -> {
            assertThat(coverage.percent(200)).as("accepted").isGreaterThan(2);
            assertThat(coverage.percent(400)).as("refused").isGreaterThan(50);
        }).check((post, coverage) -> isRefusedNamingAFieldOrBecomesARuleInForce(post.document(),
                post.overTheKeeper(), coverage));
    }

    private static void isRefusedNamingAFieldOrBecomesARuleInForce(Map<String, Object> document,
            boolean overTheKeeper, Coverage coverage) {
        String id = overTheKeeper ? "keeper" : "fuzzed";
        RuleChange result = admin.put(id, document);
        coverage.collect(result.outcome().code());
        assertThat(result.outcome().code()).as(document + " -> " + result).isIn(200, 400);
        if (result.outcome().code() == 400) {
            assertThat(result.reason()).as(document.toString()).asString().isNotBlank();
            assertThat(result.field()).as(document + " -> " + result).isNotNull();
            assertThat(holder.get().rules().get("keeper")).as("the valid rule stays").isEqualTo(keeper);
        }
        else {
            Object enabled = document.get("enabled");
            boolean disabled = enabled != null
                    && List.of("false", "0", "off", "no").contains(enabled.toString().strip().toLowerCase());
            Rule inForce = holder.get().rules().get(id);
            assertThat(inForce != null || disabled).as(document + " accepted but not in force").isTrue();
            // put the keeper back for the next try
            assertThat(admin.put("keeper", Map.of("capacity", "5", "refillTokens", "5", "refillPeriod", "1s"))
                    .outcome().code()).isEqualTo(200);
            keeper = holder.get().rules().get("keeper");
        }
    }

    /** Half any settings at all; half a valid document with one or two settings replaced (to reach the checks). */
    private static Gen<Map<String, Object>> documents() {
        Gen<Object> value = Gen.oneOf(Gen.elements(VALUES), Gen.strings(Gen.unicodeChar(), 0, 12));
        Gen<Map<String, Object>> any = Gen.maps(Gen.elements(SETTINGS), value, 0, 7).map(LinkedHashMap::new);
        Gen<Map<String, Object>> nearlyValid = Gen.maps(Gen.elements(SETTINGS), value, 1, 2).map(changes -> {
                    Map<String, Object> document = new LinkedHashMap<>(Map.of("capacity", "100", "refillTokens", "10",
                            "refillPeriod", "1s", "key", "api-key"));
                    document.putAll(changes);
                    return document;
                });
        return Gen.oneOf(any, nearlyValid);
    }
}
