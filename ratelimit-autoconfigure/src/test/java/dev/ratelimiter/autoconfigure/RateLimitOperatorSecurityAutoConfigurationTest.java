package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.autoconfigure.security.OperatorEndpointExposure;
import dev.ratelimiter.autoconfigure.security.RateLimitSecretsSanitizer;
import dev.ratelimiter.core.InvalidLimitException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.crypto.bcrypt.BCryptPasswordEncoder;

import static org.assertj.core.api.Assertions.assertThat;

/** When the actuator endpoints are authenticated, and what refuses to start. */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitOperatorSecurityAutoConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitOperatorSecurityAutoConfiguration.class));

    @Test
    void aManagementPortOnLoopbackNeedsNoAuthentication() {
        runner.withPropertyValues("management.server.port=8081", "management.server.address=127.0.0.1")
                .run(context -> assertThat(context).doesNotHaveBean(OperatorAccounts.class));
        runner.withPropertyValues("management.server.port=8081", "management.server.address=::1")
                .run(context -> assertThat(context).doesNotHaveBean(OperatorAccounts.class));
        runner.withPropertyValues("server.address=localhost")
                .run(context -> assertThat(context).doesNotHaveBean(OperatorAccounts.class));
    }

    @Test
    void anyOtherAddressOrNoneNeedsIt(CapturedOutput output) {
        runner.withPropertyValues("management.server.port=8081", "management.server.address=0.0.0.0")
                .run(context -> assertThat(context).hasSingleBean(OperatorAccounts.class));
        // a management port without an address listens on every address
        runner.withPropertyValues("management.server.port=8081", "server.address=127.0.0.1")
                .run(context -> assertThat(context).hasSingleBean(OperatorAccounts.class));
        // no management port: the endpoints are on the server port, on every address
        runner.run(context -> assertThat(context).hasSingleBean(OperatorAccounts.class));
        // a loopback management address does not help endpoints served on the server port
        runner.withPropertyValues("server.address=10.1.2.3")
                .run(context -> assertThat(context).hasSingleBean(OperatorAccounts.class));
        assertThat(output.getOut()).contains("Using the generated password for user 'ratelimit-admin'");
    }

    @Test
    void theSwitchOverridesTheAddressAndADisabledPortNeedsNothing() {
        runner.withPropertyValues("management.server.port=8081", "management.server.address=0.0.0.0",
                "ratelimit.management.security.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(OperatorAccounts.class));
        runner.withPropertyValues("server.address=127.0.0.1", "ratelimit.management.security.enabled=true",
                "ratelimit.management.security.admin.password=long-enough-secret")
                .run(context -> assertThat(context).hasSingleBean(OperatorAccounts.class));
        runner.withPropertyValues("management.server.port=-1")
                .run(context -> assertThat(context).doesNotHaveBean(OperatorAccounts.class));
    }

    @Test
    void exposedEndpointsWithoutSpringSecurityStopTheStartWithAReason() {
        runner.withClassLoader(new FilteredClassLoader(ServerHttpSecurity.class))
                .withPropertyValues("management.server.port=8081", "management.server.address=0.0.0.0")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                            .hasMessageContaining("the management port on 0.0.0.0 and must be authenticated")
                            .hasMessageContaining("management.server.address to 127.0.0.1");
                });
    }

    @Test
    void weakOrClashingAccountsAreRefusedNamingTheSetting() {
        runner.withPropertyValues("ratelimit.management.security.admin.password=short")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .isInstanceOf(InvalidLimitException.class).hasMessageContaining("at least 12 characters")
                        .extracting(ex -> ((InvalidLimitException) ex).setting())
                        .isEqualTo("ratelimit.management.security.admin.password"));
        runner.withPropertyValues("ratelimit.management.security.admin.password=long-enough-secret",
                "ratelimit.management.security.viewer.username=ratelimit-admin",
                "ratelimit.management.security.viewer.password=another-long-secret")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("needs a user name of its own"));
        runner.withPropertyValues("ratelimit.management.security.admin.username=a:b")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("without ':'"));
    }

    /** A password encoding that cannot be read stops the start-up, not the first login; a good one starts. */
    @Test
    void aPasswordEncodingThatCannotBeReadStopsTheStartUp() {
        runner.withPropertyValues("ratelimit.management.security.admin.password={bcrypt}$2a$10$not-a-hash")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .isInstanceOf(InvalidLimitException.class)
                        .hasMessageContaining("not a well-formed {bcrypt} value")
                        .extracting(ex -> ((InvalidLimitException) ex).setting())
                        .isEqualTo("ratelimit.management.security.admin.password"));
        runner.withPropertyValues("ratelimit.management.security.admin.password=long-enough-secret",
                "ratelimit.management.security.viewer.password={rot13}long-enough-secret")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("no password encoder is known by what is between its braces")
                        .hasMessageNotContaining("rot13"));
        runner.withPropertyValues("ratelimit.management.security.admin.password={bcrypt}"
                + new BCryptPasswordEncoder(4).encode("long-enough-secret"))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(OperatorAccounts.class));
    }

    @Test
    void onlyLiteralsAndLocalhostCountAsLoopbackNeverANameThatCouldResolveElsewhere() {
        for (String loopback : new String[] { "127.0.0.1", "127.9.9.9", "::1", "[::1]", "0:0:0:0:0:0:0:1",
                "localhost", " 127.0.0.1 " }) {
            assertThat(OperatorEndpointExposure.isLoopback(loopback)).as(loopback).isTrue();
        }
        for (String reachable : new String[] { "0.0.0.0", "::", "10.0.0.1", "my-host", "localhost.example.com",
                "127.0.0.1.nip.io", "", null }) {
            assertThat(OperatorEndpointExposure.isLoopback(reachable)).as(reachable).isFalse();
        }
    }

    @Test
    void thePasswordsAndTheClientIdSecretAreMaskedUnderEveryName() {
        for (String key : new String[] { "ratelimit.management.security.admin.password",
                "RATELIMIT_MANAGEMENT_SECURITY_VIEWER_PASSWORD", "ratelimit.client-id.secret",
                "RATELIMIT_CLIENTID_PREVIOUSSECRET", "ratelimit.clientId.previousSecret", "ratelimit.tiers.pro.api-keys[0]",
                "ratelimit.rules.acme.match.api-keys", "RATELIMIT_TIERS_PRO_APIKEYS" }) {
            assertThat(RateLimitSecretsSanitizer.isRateLimitSecret(key)).as(key).isTrue();
        }
        for (String key : new String[] { "ratelimit.management.security.admin.username", "ratelimit.api-key.header",
                "ratelimit.api-key.unknown.limit.capacity", "ratelimit.tiers.pro.limits.default.capacity" }) {
            assertThat(RateLimitSecretsSanitizer.isRateLimitSecret(key)).as(key).isFalse();
        }
    }
}
