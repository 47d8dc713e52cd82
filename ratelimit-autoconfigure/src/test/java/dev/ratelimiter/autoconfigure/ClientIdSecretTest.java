package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code ratelimit.client-id.*}: which hash names buckets and matches customers, and what start-up says of it. */
@ExtendWith(OutputCaptureExtension.class)
class ClientIdSecretTest {

    static final String SECRET = "0123456789abcdef0123456789abcdef";
    static final String OTHER_SECRET = "fedcba9876543210fedcba9876543210";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
            .withUserConfiguration(CapturingStore.class)
            .withPropertyValues("ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.capacity=10",
                    "ratelimit.tiers.free.limits.default.refill-tokens=5",
                    "ratelimit.tiers.pro.api-keys=pro-key",
                    "ratelimit.tiers.pro.limits.default.capacity=100",
                    "ratelimit.tiers.pro.limits.default.refill-tokens=50");

    @Test
    void withoutASecretIdsStayUnkeyedAndStartUpWarnsOnceHowToSetOne(CapturedOutput output) {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(ClientIdKeyring.class).current().isKeyed()).isFalse();
            assertThat(partitionOf(context, "acme-key")).isEqualTo(ClientIds.unkeyed().of("acme-key"));
        });
        assertThat(output).containsOnlyOnce("ratelimit.client-id.secret is not set")
                .contains("reverses for a guessable key").contains("RATELIMIT_CLIENTID_SECRET")
                .contains("at least 16 bytes");
    }

    @Test
    void withASecretBucketsAreNamedByTheHmacAndTiersStillMatch(CapturedOutput output) {
        runner.withPropertyValues("ratelimit.client-id.secret=" + SECRET).run(context -> {
            ClientIds keyed = ClientIds.keyed("s", SECRET);
            assertThat(partitionOf(context, "acme-key")).isEqualTo(keyed.of("acme-key"))
                    .isNotEqualTo(ClientIds.unkeyed().of("acme-key"));
            assertThat(context.getBean(RuleSetHolder.class).get().tierOf("pro-key")).isEqualTo("pro");
            assertThat(context.getBean(ClientIdKeyring.class).known()).extracting(ClientIds::scheme)
                    .containsExactly(keyed.scheme(), "sha256");
        });
        assertThat(output).doesNotContain("ratelimit.client-id.secret is not set").doesNotContain(SECRET);
    }

    @Test
    void twoContextsWithTwoSecretsInOneJvmNameBucketsApart() {
        runner.withPropertyValues("ratelimit.client-id.secret=" + SECRET).run(first -> runner
                .withPropertyValues("ratelimit.client-id.secret=" + OTHER_SECRET).run(second -> {
                    String one = partitionOf(first, "acme-key");
                    String other = partitionOf(second, "acme-key");
                    assertThat(one).isNotEqualTo(other);
                    assertThat(partitionOf(first, "acme-key")).as("the second context changed nothing of the first")
                            .isEqualTo(one).isEqualTo(ClientIds.keyed("s", SECRET).of("acme-key"));
                }));
    }

    @Test
    void thePreviousSecretIsKnownButNeverNamesABucket() {
        runner.withPropertyValues("ratelimit.client-id.secret=" + SECRET,
                "ratelimit.client-id.previous-secret=" + OTHER_SECRET).run(context -> {
                    ClientIdKeyring keyring = context.getBean(ClientIdKeyring.class);
                    assertThat(keyring.known()).extracting(ClientIds::scheme).containsExactly(
                            ClientIds.keyed("s", SECRET).scheme(), ClientIds.keyed("s", OTHER_SECRET).scheme(), "sha256");
                    assertThat(partitionOf(context, "acme-key")).isEqualTo(ClientIds.keyed("s", SECRET).of("acme-key"));
                });
    }

    @Test
    void aShortSecretFailsStartUpWithASentenceNamingTheSetting() {
        runner.withPropertyValues("ratelimit.client-id.secret=changeme").run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = new InvalidLimitFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis.getDescription()).startsWith("The rate limit configuration is invalid: "
                    + "ratelimit.client-id.secret is 8 bytes long, but must be at least 16")
                    .doesNotContain("changeme");
            assertThat(analysis.getAction()).startsWith("Correct ratelimit.client-id.secret");
        });
        runner.withPropertyValues("ratelimit.client-id.secret=" + SECRET, "ratelimit.client-id.previous-secret=old")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("ratelimit.client-id.previous-secret is 3 bytes long"));
    }

    @Test
    void aPreviousSecretWithoutACurrentOneFailsStartUp() {
        runner.withPropertyValues("ratelimit.client-id.previous-secret=" + SECRET).run(context -> assertThat(context)
                .hasFailed().getFailure().rootCause()
                .hasMessageContaining("ratelimit.client-id.previous-secret is set but ratelimit.client-id.secret is not"));
    }

    @Test
    void aConfiguredOverrideHashedUnderAnUnknownSecretFailsStartUp() {
        String underOther = ClientIds.keyed("s", OTHER_SECRET).hashed("acme-key").toString();
        String[] override = { "ratelimit.rules.acme.group=tier-default", "ratelimit.rules.acme.capacity=500",
                "ratelimit.rules.acme.refill-tokens=500", "ratelimit.rules.acme.match.api-keys=" + underOther };
        runner.withPropertyValues("ratelimit.client-id.secret=" + SECRET).withPropertyValues(override)
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("ratelimit.rules.acme.match.api-keys has 1 key(s) hashed under a "
                                + "secret this instance does not have"));
        runner.withPropertyValues("ratelimit.client-id.secret=" + SECRET,
                "ratelimit.client-id.previous-secret=" + OTHER_SECRET).withPropertyValues(override)
                .run(context -> assertThat(context.getBean(RuleSetHolder.class).get()
                        .applicableTo(request("acme-key"))).extracting(rule -> rule.id()).containsExactly("acme"));
    }

    @Test
    void aUserKeyringMakesOursBackOff() {
        runner.withUserConfiguration(UserKeyring.class).run(context -> {
            assertThat(context).hasSingleBean(ClientIdKeyring.class);
            assertThat(partitionOf(context, "acme-key")).isEqualTo(ClientIds.keyed("s", OTHER_SECRET).of("acme-key"));
        });
    }

    private static String partitionOf(ApplicationContext context, String apiKey) {
        CapturingStore store = context.getBean(CapturingStore.class);
        store.seen.clear();
        context.getBean(RateLimitEvaluator.class).check(request(apiKey), new RequestPermits())
                .block(Duration.ofSeconds(5));
        return store.seen.get(0).bucket().partition();
    }

    private static RequestAttributes request(String apiKey) {
        return new RequestAttributes(apiKey, null, null, null, "api", "/x", "default", "free", 1);
    }

    @Configuration(proxyBeanMethods = false)
    static class CapturingStore implements RateLimitStore {

        final List<Check> seen = new ArrayList<>();

        @Override
        public Mono<Verdict> evaluate(List<Check> checks) {
            seen.addAll(checks);
            return Mono.just(Verdict.evaluated(List.of(), Verdict.Source.STORE));
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserKeyring {

        @Bean
        ClientIdKeyring myClientIds() {
            return ClientIdKeyring.of(ClientIds.keyed("s", OTHER_SECRET), null);
        }
    }
}
