package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.autoconfigure.rules.PropertyRuleDefinitions;
import dev.ratelimiter.autoconfigure.security.ServerForwarding;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleChange;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.UnknownApiKeyPolicy;
import dev.ratelimiter.core.UnknownValuePolicy;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * When the web server reads forwarding headers itself — by Spring Boot's cloud detection or by
 * {@code server.forward-headers-strategy} — rules keyed by the client address would bucket clients by an address they
 * write themselves: such a configuration does not start, and such a runtime rule is refused, unless the operator
 * trusts the server's reading.
 */
class ServerForwardingTest {

    @Test
    void inAPodWithoutAStrategyAConfigurationKeyedByAddressIsRefusedNamingWhatToSet() {
        assertThatThrownBy(() -> check(environment(true), perAddress(), false))
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("The limiter buckets clients by their address "
                        + "(ratelimit.api-key.unknown.policy per-address)")
                .hasMessageContaining("server.forward-headers-strategy is not set and Spring Boot detected the cloud "
                        + "platform KUBERNETES, which turns it on")
                .hasMessageContaining("Set server.forward-headers-strategy=none")
                .satisfies(ex -> assertThat(((InvalidLimitException) ex).setting())
                        .isEqualTo("server.forward-headers-strategy"));
    }

    @Test
    void anExplicitNativeOrFrameworkStrategyOrAForcedPlatformIsRefusedToo() {
        for (String[] setting : new String[][] { { "server.forward-headers-strategy", "native" },
            { "server.forward-headers-strategy", "FRAMEWORK" }, { "spring.main.cloud-platform", "kubernetes" } }) {
            StandardEnvironment environment = environment(false);
            environment.getPropertySources().addFirst(new MapPropertySource("test", Map.of(setting[0], setting[1])));
            assertThatThrownBy(() -> check(environment, perAddress(), false)).as(setting[0] + "=" + setting[1])
                    .isInstanceOf(InvalidLimitException.class).hasMessageContaining("client writes itself");
        }
    }

    @Test
    void aBlankStrategyIsNotSetToSpringBootSoThePodsDetectionDecides() {
        for (String blank : new String[] { "", "  " }) {
            StandardEnvironment environment = environment(true);
            environment.getPropertySources().addFirst(new MapPropertySource("test",
                    Map.of("server.forward-headers-strategy", blank)));
            assertThatThrownBy(() -> check(environment, perAddress(), false)).as("'" + blank + "'")
                    .isInstanceOf(InvalidLimitException.class).hasMessageContaining("detected the cloud platform");
        }
        StandardEnvironment lenient = environment(false);
        lenient.getPropertySources().addFirst(new MapPropertySource("test",
                Map.of("server.forward-headers-strategy", "Nat-ive")));
        assertThatThrownBy(() -> check(lenient, perAddress(), false)).as("Boot's lenient enum reading")
                .isInstanceOf(InvalidLimitException.class).hasMessageContaining("is native");
    }

    @Test
    void aPerUserRuleIsKeyedByTheAddressForUnvouchedUsersCountedPerAddress() {
        RateLimitProperties properties = perUser();
        properties.getIdentity().getUser().setSource(List.of(IdentitySourceProperties.Source.CLAIM,
                IdentitySourceProperties.Source.HEADER));
        assertThatThrownBy(() -> check(environment(true), properties, false))
                .isInstanceOf(InvalidLimitException.class).hasMessageContaining("rule 'per-user', keyed by a user");
        RateLimitProperties accepted = perUser();
        accepted.getIdentity().getUser().setSource(List.of(IdentitySourceProperties.Source.CLAIM,
                IdentitySourceProperties.Source.HEADER));
        accepted.getIdentity().getUser().getUnknown().setPolicy(UnknownValuePolicy.ACCEPT);
        check(environment(true), accepted, false);
        RateLimitProperties tokenOnly = perUser();
        tokenOnly.getIdentity().getUser().setSource(List.of(IdentitySourceProperties.Source.CLAIM));
        check(environment(true), tokenOnly, false);
        check(environment(true), perUser(), false);
    }

    /** A per-user rule, unknown keys in the default tier: nothing keyed by the address but what the user source adds. */
    private static RateLimitProperties perUser() {
        RateLimitProperties properties = perAddress();
        properties.getApiKey().getUnknown().setPolicy(UnknownApiKeyPolicy.DEFAULT_TIER);
        RuleProperties rule = new RuleProperties();
        rule.setKey(List.of(Dimension.USER));
        rule.setCapacity(5);
        rule.setRefillTokens(5);
        properties.getRules().put("per-user", rule);
        return properties;
    }

    @Test
    void theStrategyNoneNoPlatformTheOptInOrNoRuleKeyedByAddressStart() {
        StandardEnvironment none = environment(true);
        none.getPropertySources().addFirst(new MapPropertySource("test",
                Map.of("server.forward-headers-strategy", "none")));
        check(none, perAddress(), false);
        StandardEnvironment noPlatform = environment(true);
        noPlatform.getPropertySources().addFirst(new MapPropertySource("test",
                Map.of("spring.main.cloud-platform", "none")));
        check(noPlatform, perAddress(), false);
        check(environment(true), perAddress(), true);
        RateLimitProperties defaultTier = perAddress();
        defaultTier.getApiKey().getUnknown().setPolicy(UnknownApiKeyPolicy.DEFAULT_TIER);
        check(environment(true), defaultTier, false);
        check(environment(false), perAddress(), false);
    }

    @Test
    void aRuntimeRuleKeyedByAddressIsRefusedWithTheReason() {
        RateLimitProperties properties = perAddress();
        properties.getApiKey().getUnknown().setPolicy(UnknownApiKeyPolicy.DEFAULT_TIER);
        ServerForwarding forwarding = ServerForwarding.of(environment(true), properties.getIdentity());
        RuleSetFactory factory = new RuleSetFactory(new PropertyRuleDefinitions(properties,
                ClientIdKeyring.unkeyed(), forwarding));
        InMemoryRuleStore store = new InMemoryRuleStore();
        RuleSync sync = new RuleSync(store, factory, new RuleSetHolder(factory.configured()), Duration.ofHours(1));
        sync.start();
        try {
            RuleAdmin admin = new RuleAdmin(store, sync, factory);
            RuleChange perIp = admin.put("per-ip", Map.of("key", "client-ip", "capacity", 5, "refillTokens", 5));
            assertThat(perIp.outcome()).isEqualTo(RuleChange.Outcome.INVALID);
            assertThat(perIp.field()).isEqualTo("ratelimit.rules.per-ip.key");
            assertThat(perIp.reason()).startsWith("Rule 'per-ip' keys by the client address, but "
                    + "server.forward-headers-strategy is not set");
            RuleChange perKey = admin.put("per-key", Map.of("capacity", 5, "refillTokens", 5));
            assertThat(perKey.isApplied()).as(perKey.toString()).isTrue();
        }
        finally {
            sync.stop();
        }
    }

    /**
     * A rule keyed by address already in the shared store (written before the upgrade, or by an instance whose server
     * reports the peer as it is) stays out of force on an instance whose server rewrites the address; the others apply.
     */
    @Test
    void aRuntimeRuleKeyedByAddressAlreadyInTheStoreStaysOutOfForce() {
        InMemoryRuleStore store = new InMemoryRuleStore();
        RateLimitProperties properties = perAddress();
        properties.getApiKey().getUnknown().setPolicy(UnknownApiKeyPolicy.DEFAULT_TIER);
        RuleSetFactory writerFactory = new RuleSetFactory(new PropertyRuleDefinitions(properties,
                ClientIdKeyring.unkeyed(), ServerForwarding.NONE));
        RuleSync writerSync = new RuleSync(store, writerFactory, new RuleSetHolder(writerFactory.configured()),
                Duration.ofHours(1));
        writerSync.start();
        try {
            RuleAdmin writer = new RuleAdmin(store, writerSync, writerFactory);
            assertThat(writer.put("per-ip", Map.of("key", "client-ip", "capacity", 5, "refillTokens", 5))
                    .isApplied()).isTrue();
            assertThat(writer.put("per-key", Map.of("capacity", 5, "refillTokens", 5)).isApplied()).isTrue();
        }
        finally {
            writerSync.stop();
        }

        ServerForwarding forwarding = ServerForwarding.of(environment(true), properties.getIdentity());
        RuleSetFactory podFactory = new RuleSetFactory(new PropertyRuleDefinitions(properties,
                ClientIdKeyring.unkeyed(), forwarding));
        RuleSetHolder holder = new RuleSetHolder(forwarding.requireReliable(podFactory.configured()));
        RuleSync podSync = new RuleSync(store, podFactory, holder, Duration.ofHours(1));
        podSync.start();
        try {
            assertThat(holder.get().rules()).as("the rule keyed by address stays out, the other applies")
                    .doesNotContainKey("per-ip").containsKey("per-key");
            assertThat(podSync.status().state()).isEqualTo(RuleSync.State.STORE_INVALID);
            assertThat(podSync.status().problem()).contains("per-ip").contains("client address");
        }
        finally {
            podSync.stop();
        }
    }

    private static void check(StandardEnvironment environment, RateLimitProperties properties, boolean trusted) {
        properties.getIdentity().setTrustServerForwardedAddress(trusted);
        ServerForwarding forwarding = ServerForwarding.of(environment, properties.getIdentity());
        forwarding.requireReliable(new RuleSetFactory(new PropertyRuleDefinitions(properties)).configured());
    }

    /** A tier of one listed key and the per-address policy for the others. */
    private static RateLimitProperties perAddress() {
        RateLimitProperties properties = RuleAdminRaceTest.properties();
        properties.getTiers().get("free").setApiKeys(List.of("listed-key-1"));
        properties.getApiKey().getUnknown().setPolicy(UnknownApiKeyPolicy.PER_ADDRESS);
        return properties;
    }

    /** An environment whose system variables are a pod's, or none at all, whatever the machine running this has. */
    private static StandardEnvironment environment(boolean pod) {
        StandardEnvironment environment = new StandardEnvironment();
        Map<String, Object> variables = new HashMap<>();
        if (pod) {
            variables.put("KUBERNETES_SERVICE_HOST", "10.96.0.1");
            variables.put("KUBERNETES_SERVICE_PORT", "443");
        }
        environment.getPropertySources().replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                        variables));
        return environment;
    }
}
