package dev.ratelimiter.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * r35c: the what-if replay against shadow mode for a client an abuse score lowers. In shadow (and enforced) the
 * proposed rule would hold that client to its factor of the limit — the evaluator scales every rule per API key,
 * shadow or not — and the events record the factor ({@code abuseFactor}); the replay must judge it the same way, or it
 * reports none of the refusals shadow mode would show for exactly the clients the scores are about.
 */
class WhatIfAbuseAttackTest {

    static final Instant START = Instant.parse("2026-12-01T10:00:00Z");

    @Test
    void aClientsAbuseFactorLowersTheProposedRuleInTheReplayAsInShadow() {
        Rule proposed = new Rule("proposed", "proposed", Match.ANY, List.of(Dimension.API_KEY),
                SlidingWindowLimit.of("p.", 10, Duration.ofMinutes(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 1, null, Scope.REGIONAL);
        WhatIfReplay replay = new WhatIfReplay(proposed, ClientIdKeyring.unkeyed());
        for (int i = 0; i < 10; i++) {
            replay.replay(new DecisionEvent(START.plusSeconds(i), "abuser", "free", "api", "default",
                    DecisionEvent.Verdict.ALLOWED, "evaluated", "store", "free.default", 10, 5, List.of(), null, null,
                    "gw-1", "eu", 0.1));
        }
        // in shadow the rule holds this client to ceil(10 × 0.1) = 1 a minute: 9 of the 10 refused
        assertThat(replay.report(5).refused()).as("requests of a client at factor 0.1 the proposed rule refuses")
                .isEqualTo(9);
    }
}
