package dev.ratelimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A client of {@code GET /ratelimit/me} probing for other customers' overrides by id: {@code ?rule=<id>} answered 404
 * "There is no rule" for an id that does not exist, and 200 (nothing read) for an override of another customer, so
 * guessing {@code acme-override}, {@code globex-override}... told which customers have overrides — which the threat
 * model says the usage API never names.
 */
class UsageLookupOverrideProbeTest {

    private static final TokenBucketLimit TEN_PER_HOUR = new TokenBucketLimit(10, 10, Duration.ofHours(1));

    private final ClientIds clientIds = ClientIds.unkeyed();
    private final LocalBucketStore store = new LocalBucketStore(1_000);

    private final RuleSet rules = RuleSet.builder("free")
            .rule(new Rule("free.default", "free.default", Match.ANY, List.of(Dimension.API_KEY), TEN_PER_HOUR, 0,
                    Mode.ENFORCE, FailureMode.OPEN))
            .rule(new Rule("acme-override", "acme-override", new Match(Set.of(), List.of(), Set.of(), Set.of(),
                    Set.of("acme-key-0001")), List.of(Dimension.API_KEY), TEN_PER_HOUR, 0, Mode.ENFORCE, FailureMode.OPEN))
            .build();

    private final UsageLookup lookup = new UsageLookup(() -> rules, clientIds, null, store,
            Clock.fixed(Instant.parse("2026-12-05T12:00:00Z"), ZoneOffset.UTC));

    @Test
    void anotherCustomersOverrideReadsAsARuleThatDoesNotExist() {
        Object missing = outcome("no-such-override");
        Object othersOverride = outcome("acme-override");
        assertThat(othersOverride).as("asking for another customer's override").isEqualTo(missing);
        // the override's own customer reads it
        Usage acme = lookup.read(new UsageQuery("acme-key-0001", null, null, null, null, null, null, null, null,
                "acme-override")).block();
        assertThat(acme.rules()).extracting(used -> used.rule().id()).containsExactly("acme-override");
    }

    /** What the caller learns: the failure's kind and message, or the rule ids read and skipped. */
    private Object outcome(String ruleId) {
        UsageQuery query = new UsageQuery("mallory-key-01", null, null, null, null, null, null, null, null, ruleId);
        Throwable failure = catchThrowable(() -> lookup.read(query).block());
        if (failure instanceof UsageQueryException refused) {
            return refused.kind() + ": " + refused.getMessage().replace(ruleId, "<id>");
        }
        Usage usage = lookup.read(query).block();
        return "read " + usage.rules().size() + ", skipped " + usage.skipped().size();
    }
}
