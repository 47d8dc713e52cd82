package dev.ratelimiter.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What a person sees when an application starts with a limit that cannot work. */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureReportTest {

    @Test
    void zeroCapacityIsReportedAsASentence(CapturedOutput output) {
        assertThatThrownBy(() -> start("--ratelimit.default-tier=free",
                "--ratelimit.tiers.free.limits.default.capacity=0",
                "--ratelimit.tiers.free.limits.default.refill-tokens=5"))
                .isInstanceOf(Exception.class);
        assertThat(output).contains("APPLICATION FAILED TO START")
                .contains("The rate limit configuration is invalid: ratelimit.tiers.free.limits.default.capacity "
                        + "must be at least 1 (the largest burst a client may send), but was 0.")
                .contains("Correct ratelimit.tiers.free.limits.default.capacity in your application configuration");
    }

    @Test
    void negativeRefillIsReportedAsASentence(CapturedOutput output) {
        assertThatThrownBy(() -> start("--ratelimit.default-tier=free",
                "--ratelimit.tiers.free.limits.default.capacity=10",
                "--ratelimit.tiers.free.limits.default.refill-tokens=-1"))
                .isInstanceOf(Exception.class);
        assertThat(output).contains("ratelimit.tiers.free.limits.default.refill-tokens must be at least 1");
    }

    @Test
    void unknownAlgorithmIsReportedWithTheValidChoices(CapturedOutput output) {
        assertThatThrownBy(() -> start("--ratelimit.default-tier=free",
                "--ratelimit.tiers.free.limits.default.algorithm=leaky-bucket",
                "--ratelimit.tiers.free.limits.default.capacity=10",
                "--ratelimit.tiers.free.limits.default.refill-tokens=5"))
                .isInstanceOf(Exception.class);
        assertThat(output).contains("APPLICATION FAILED TO START")
                .contains("ratelimit.tiers.free.limits.default.algorithm")
                .contains("leaky-bucket")
                .contains("TOKEN_BUCKET");
    }

    private static void start(String... args) {
        SpringApplication application = new SpringApplication(LimiterOnly.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.run(args).close();
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(RateLimitAutoConfiguration.class)
    static class LimiterOnly {
    }
}
