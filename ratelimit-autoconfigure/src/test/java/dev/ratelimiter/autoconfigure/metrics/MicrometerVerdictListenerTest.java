package dev.ratelimiter.autoconfigure.metrics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.autoconfigure.metrics.RuleTags.By;
import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSetBuilder;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code rule} tag stays as bounded as the configuration, and the meters of rules gone are removed without ever
 * removing a live rule's: the rule lifecycle as {@link RuleSetHolder} reports it, with a real (simple) registry.
 */
class MicrometerVerdictListenerTest {

    /** Configured: the tier's limit (group tier-default) and a per-IP cap (its own group). */
    private static final Set<String> CONFIGURED = Set.of("free.default", "per-ip");
    private static final Rule TIER = rule("free.default", "tier-default");
    private static final Rule PER_IP = rule("per-ip", "per-ip");
    private static final RequestAttributes REQUEST = new RequestAttributes("k", null, null, null, "api", "/x",
            "default", "free", 1);

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void configuredRulesKeepTheirIdsAndOverridesTagAsTheGroupTheyCompeteIn() {
        Rule override = rule("acme-boost", "tier-default");
        Rule ownGroup = rule("acme-report-cap", "acme-report-cap");
        MicrometerVerdictListener listener = listener(By.ID, By.GROUP, Set.of(), rules(TIER, PER_IP, override,
                ownGroup));

        for (Rule rule : List.of(TIER, PER_IP, override, ownGroup)) {
            listener.onVerdict(REQUEST, denied(rule));
        }

        assertThat(ruleTags("ratelimit.decisions")).containsExactly("free.default", "per-ip", "runtime",
                "tier-default");
        assertThat(registry.get("ratelimit.decisions").tag("rule", "tier-default").counter().count()).isEqualTo(1);
        assertThat(registry.get("ratelimit.decisions").tag("rule", "runtime").counter().count()).isEqualTo(1);
    }

    @Test
    void keptIdsAndTheIdChoicesTagByIdAndGroupChoicesByGroup() {
        Rule kept = rule("big-customer", "tier-default");
        Rule other = rule("small-customer", "tier-default");
        MicrometerVerdictListener byId = listener(By.GROUP, By.ID, Set.of(), rules(TIER, kept, other));
        byId.onVerdict(REQUEST, denied(TIER));
        byId.onVerdict(REQUEST, denied(other));
        assertThat(ruleTags("ratelimit.decisions")).containsExactly("small-customer", "tier-default");

        registry.clear();
        MicrometerVerdictListener keeping = listener(By.ID, By.GROUP, Set.of("big-customer"), rules(TIER, kept,
                other));
        keeping.onVerdict(REQUEST, denied(kept));
        keeping.onVerdict(REQUEST, denied(other));
        assertThat(ruleTags("ratelimit.decisions")).containsExactly("big-customer", "tier-default");
    }

    @Test
    void overridesPostedAndDeletedLeaveTheMetersBoundedAndTheDeletedRulesMetersGone() {
        RuleSetHolder holder = new RuleSetHolder(rules(TIER, PER_IP));
        MicrometerVerdictListener listener = following(holder, By.ID, By.ID, Set.of("kept-customer"));
        Rule kept = rule("kept-customer", "tier-default");

        int peak = 0;
        for (int i = 0; i < 50; i++) {
            Rule override = rule("customer-" + i, "tier-default");
            holder.replace(rules(TIER, PER_IP, kept, override));
            listener.onVerdict(REQUEST, denied(override));
            listener.onVerdict(REQUEST, nearLimit(override));
            listener.onVerdict(REQUEST, denied(kept));
            listener.onVerdict(REQUEST, denied(TIER));
            peak = Math.max(peak, registry.getMeters().size());
            holder.replace(rules(TIER, PER_IP, kept));
            assertThat(ruleTags("ratelimit.decisions")).as("customer-%d deleted", i)
                    .doesNotContain("customer-" + i);
            assertThat(ruleTags("ratelimit.near.limit")).doesNotContain("customer-" + i);
        }

        assertThat(peak).as("meters at once: the override's denied, allowed and near-limit counters, "
                + "the kept rule's and the tier's denied").isEqualTo(5);
        assertThat(ruleTags("ratelimit.decisions")).containsExactly("free.default", "kept-customer");
        assertThat(registry.get("ratelimit.decisions").tag("rule", "kept-customer").counter().count())
                .as("a live rule's counter survives every sweep").isEqualTo(50);
    }

    @Test
    void aVerdictOfARuleJustDeletedLeavesNoMeterBehindWhileOneOfARulePostedAgainStays() {
        Rule override = rule("acme-boost", "acme");
        RuleSetHolder holder = new RuleSetHolder(rules(TIER, override));
        MicrometerVerdictListener listener = following(holder, By.ID, By.ID, Set.of());

        holder.replace(rules(TIER));
        // decided under the rules before the delete, reported after the sweep
        listener.onVerdict(REQUEST, denied(override));
        assertThat(ruleTags("ratelimit.decisions")).isEmpty();

        holder.replace(rules(TIER, override));
        listener.onVerdict(REQUEST, denied(override));
        listener.onVerdict(REQUEST, denied(override));
        assertThat(registry.get("ratelimit.decisions").tag("rule", "acme-boost").counter().count()).isEqualTo(2);
    }

    @Test
    void verdictsRacingRuleChangesNeverLoseALiveRulesCountNorLeaveADeletedRulesMeter() throws Exception {
        Rule flapping = rule("acme-boost", "acme");
        RuleSetHolder holder = new RuleSetHolder(rules(TIER, flapping));
        MicrometerVerdictListener listener = following(holder, By.ID, By.ID, Set.of());
        int threads = 4;
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong tierVerdicts = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> deciding = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                deciding.add(pool.submit(() -> {
                    while (!stop.get()) {
                        listener.onVerdict(REQUEST, denied(TIER));
                        tierVerdicts.incrementAndGet();
                        listener.onVerdict(REQUEST, denied(flapping));
                    }
                }));
            }
            for (int flip = 1; flip <= 400; flip++) {
                holder.replace(flip % 2 == 0 ? rules(TIER) : rules(TIER, flapping));
            }
            // deleted for good: verdicts decided under the old rules go on arriving, and no sweep follows them
            long deleted = tierVerdicts.get();
            while (tierVerdicts.get() < deleted + 2_000) {
                Thread.onSpinWait();
            }
            stop.set(true);
            for (Future<?> done : deciding) {
                done.get();
            }
        }
        finally {
            pool.shutdownNow();
        }

        assertThat(registry.get("ratelimit.decisions").tag("rule", "free.default").counter().count())
                .as("every verdict of the rule in force all along").isEqualTo(tierVerdicts.get());
        assertThat(ruleTags("ratelimit.decisions")).containsExactly("free.default");
    }

    @Test
    void theRuntimeTagGoesWithTheLastRuntimeRuleAndNoneStays() {
        Rule override = rule("acme-boost", "acme");
        RuleSetHolder holder = new RuleSetHolder(rules(TIER, override));
        MicrometerVerdictListener listener = following(holder, By.ID, By.GROUP, Set.of());
        listener.onVerdict(REQUEST, denied(override));
        listener.onVerdict(REQUEST, Verdict.evaluated(List.of(), Verdict.Source.STORE));
        assertThat(ruleTags("ratelimit.decisions")).containsExactly("none", "runtime");

        holder.replace(rules(TIER));

        assertThat(ruleTags("ratelimit.decisions")).containsExactly("none");
    }

    private MicrometerVerdictListener listener(By configured, By runtime, Set<String> kept, RuleSet rules) {
        return new MicrometerVerdictListener(registry, new RuleTags(configured, runtime, kept, CONFIGURED::contains,
                () -> rules));
    }

    /** A listener told of every rule set the holder puts in force, as the auto-configuration wires it. */
    private MicrometerVerdictListener following(RuleSetHolder holder, By configured, By runtime, Set<String> kept) {
        MicrometerVerdictListener listener = new MicrometerVerdictListener(registry, new RuleTags(configured, runtime,
                kept, CONFIGURED::contains, holder));
        holder.onReplace(changed -> listener.rulesChanged());
        return listener;
    }

    private Set<String> ruleTags(String meter) {
        Set<String> tags = new TreeSet<>();
        for (Meter m : registry.find(meter).meters()) {
            tags.add(m.getId().getTag("rule"));
        }
        return tags;
    }

    /** A rule; one not configured is a customer override, matching its own API key. */
    static Rule rule(String id, String group) {
        Match match = CONFIGURED.contains(id) ? Match.ANY
                : new Match(Set.of(), List.of(), Set.of(), Set.of(), Set.of(id + "-key"));
        return new Rule(id, group, match, List.of(Dimension.API_KEY),
                TokenBucketLimit.of(id + ".", 10, 10, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
    }

    static RuleSet rules(Rule... rules) {
        RuleSetBuilder builder = RuleSet.builder("free");
        for (Rule rule : rules) {
            builder.rule(rule);
        }
        return builder.build();
    }

    private static Verdict denied(Rule rule) {
        return Verdict.evaluated(List.of(outcome(rule, false, 0)), Verdict.Source.STORE);
    }

    private static Verdict nearLimit(Rule rule) {
        return Verdict.evaluated(List.of(outcome(rule, true, 1)), Verdict.Source.STORE);
    }

    private static RuleOutcome outcome(Rule rule, boolean allowed, long remaining) {
        return new RuleOutcome(new Check(rule, new BucketKey("p", rule.id()), 1, false), allowed, remaining,
                Duration.ZERO, Duration.ZERO);
    }
}
