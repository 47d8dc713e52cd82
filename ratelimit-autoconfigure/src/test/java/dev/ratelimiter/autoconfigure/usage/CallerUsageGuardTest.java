package dev.ratelimiter.autoconfigure.usage;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.ratelimiter.autoconfigure.rules.RulesApiAccess;
import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.UnknownApiKeyPolicy;
import dev.ratelimiter.core.UsageLookup;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.AdmissionRequest;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.core.VerdictListener;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guard of {@code GET /ratelimit/me} (5 reads a second per caller and instance) against a client that spends
 * nothing and rotates made-up keys from one address: under {@code api-key.unknown.policy: per-address} routes hold
 * such a client to one bucket per address (and the denial cache then spares the store), but every made-up key had a
 * guard bucket of its own, so each read was one more store script, without bound. The guard's clock stands still:
 * whatever is allowed is the burst, not a refill.
 */
class CallerUsageGuardTest {

    private static final RequestIdentity HEADERS = new RequestIdentity("X-Key", "X-User", "X-Tenant",
            new ClientAddressResolver(List.of(), 32, 64));

    private final ClientIds clientIds = ClientIds.unkeyed();
    private final LocalBucketStore store = new LocalBucketStore(1_000);

    private final RuleSet rules = RuleSet.builder("free").apiKey("listed-key-0001", "free")
            .rule(new Rule("free.default", "free.default", Match.ANY, List.of(Dimension.API_KEY),
                    new TokenBucketLimit(10, 10, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.OPEN))
            .unknownApiKeys(UnknownApiKeyPolicy.PER_ADDRESS, new Rule(RuleSet.UNKNOWN_KEYS, RuleSet.UNKNOWN_KEYS,
                    new Match(Set.of(), List.of(), Set.of(), Set.of(RuleSet.UNKNOWN_KEYS), Set.of()),
                    List.of(Dimension.CLIENT_IP), TokenBucketLimit.of("unknown.", 5, 5, Duration.ofSeconds(1)), 0,
                    Mode.ENFORCE, FailureMode.LOCAL))
            .build();

    private final RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, store, clientIds);
    private final Admission admission = new Admission(evaluator, HEADERS, new ApiKeyRefusals(true,
            HttpStatusCode.valueOf(401), HttpStatusCode.valueOf(401)), ApiKeyFormat.ANY, VerdictListener.NONE,
            Clock.systemUTC());
    private final UsageOperations operations = new UsageOperations(new UsageLookup(() -> rules, clientIds, null,
            store, Clock.systemUTC()), new UsageQueries(ApiKeyFormat.ANY), clientIds, RulesApiAccess.OPEN, null);
    private final CallerUsage usage = new CallerUsage(admission, operations, clientIds, () -> 0L);

    @Test
    void oneKeyIsHeldToItsBurst() {
        assertThat(statuses(List.of("listed-key-0001"), 8)).containsExactly(200, 200, 200, 200, 200, 429, 429, 429);
    }

    @Test
    void madeUpKeysFromOneAddressShareOneGuard() {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            keys.add("made-up-key-" + i);
        }
        List<Integer> statuses = statuses(keys, 20);
        assertThat(statuses.stream().filter(status -> status == 200).count())
                .as("reads the store answered for 20 made-up keys from one address: %s", statuses)
                .isLessThanOrEqualTo(5);
    }

    /** {@code reads} reads from 192.0.2.7, cycling through {@code keys}. */
    private List<Integer> statuses(List<String> keys, int reads) {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < reads; i++) {
            HttpHeaders headers = new HttpHeaders();
            headers.set("X-Key", keys.get(i % keys.size()));
            CallerIdentity caller = HEADERS.caller(headers);
            CallerUsage.Reply reply = usage.read(rules, caller, new AdmissionRequest("/ratelimit/me", null, Map.of(),
                    () -> "192.0.2.7"), Map.of(), "/ratelimit/me");
            assertThat(reply.refusal()).isNull();
            statuses.add(reply.answer().block(Duration.ofSeconds(10)).status().value());
        }
        return statuses;
    }
}
