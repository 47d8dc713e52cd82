package dev.ratelimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * r35c: an abuse score lowers a client's limits by its factor — the sustained rate too, not only the burst. A token
 * bucket of 100 refilled 1 a second (a common "burst 100, 1/s") scaled by 0.1 must hold the client to about 0.1 a
 * second; scaling refill-tokens 1 × 0.1 rounds it back up to 1 a second, so the abusive client keeps its full rate.
 */
class AbuseScalingRateAttackTest {

    static final Instant NOW = Instant.parse("2026-12-05T00:00:00Z");

    @Test
    void aLoweredTokenBucketRefillsAtTheLoweredRate() {
        ClientIds ids = ClientIds.unkeyed();
        AbuseScores scores = new AbuseScores(new AbuseScores.Settings(0.1, Duration.ofDays(3650), 10, Set.of(),
                Set.of()), Clock.fixed(NOW, ZoneOffset.UTC));
        scores.apply(ids.of("abuser"), new AbuseScore(null, 0.1, "op", NOW, null));
        Rule perKey = new Rule("per-key", "g", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("t.", 100, 1, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        AtomicLong clock = new AtomicLong(TimeUnit.DAYS.toNanos(1));
        RuleSet rules = RuleSet.builder("free").rule(perKey).build();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, new LocalBucketStore(100, clock::get), ids,
                null, scores);
        RequestAttributes request = new RequestAttributes("abuser", null, null, null, "api", "/x", "default", "free",
                1);
        int admitted = 0;
        // 1,000 seconds, ten attempts a second
        for (int tenth = 0; tenth < 10_000; tenth++) {
            if (evaluator.check(rules, request, new RequestPermits()).block().allowed()) {
                admitted++;
            }
            clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(100));
        }
        // lowered to 10 tokens and 0.1 a second: 10 + 100 in 1,000 s (whole: 100 + 1,000)
        assertThat(admitted).as("requests of a client lowered to 0.1 admitted in 1,000 s by a bucket of 100 at 1/s")
                .isLessThanOrEqualTo(111);
    }
}
