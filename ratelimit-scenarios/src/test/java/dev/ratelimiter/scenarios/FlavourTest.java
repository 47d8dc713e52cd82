package dev.ratelimiter.scenarios;

import java.nio.file.Path;

import dev.ratelimiter.scenarios.Gateways.Mode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The flavour switch: the MVC sample's jar, and what it refuses before anything starts. */
class FlavourTest {

    @Test
    void eachFlavourFindsItsOwnSamplesJar() {
        Path mvc = GatewayJar.locate(Flavour.MVC);
        assertThat(mvc.getFileName()).hasToString("sample-gateway-mvc.jar");
        assertThat(mvc.getParent().getParent().getFileName()).hasToString("sample-gateway-mvc");
        assertThat(GatewayJar.locate(Flavour.WEBFLUX).getFileName()).hasToString("sample-gateway.jar");
        assertThat(Flavour.MVC.jarEnvironmentVariable()).isEqualTo("SCENARIOS_GATEWAY_MVC_JAR");
        assertThat(Flavour.WEBFLUX.jarEnvironmentVariable()).isEqualTo("SCENARIOS_GATEWAY_JAR");
    }

    @Test
    void mvcRefusesTheRegionsScenarioByNameBeforeAnythingStarts() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ScenarioRunner.run("--flavour=mvc", "--scenario=noisy,regions", "--out=target/x"))
                .withMessageContaining("--flavour=mvc").withMessageContaining("scenario regions is WebFlux only")
                .withMessageContaining("Kafka");
    }

    @Test
    void mvcRefusesScgsLimiterInTheSideBySideAndLeavesItOutByDefault() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ScenarioRunner.run("--flavour=mvc", "--scenario=side-by-side",
                        "--limiters=off,scg", "--out=target/x"))
                .withMessageContaining("scenario side-by-side, limiter scg is WebFlux only")
                .withMessageContaining("--limiters=off,exact,local");
        assertThat(Flavour.MVC.defaultLimiters()).containsExactly(Mode.OFF, Mode.EXACT, Mode.LOCAL);
        assertThat(Flavour.WEBFLUX.defaultLimiters()).containsExactly(Mode.values());
        assertThat(Flavour.MVC.runsRegionsByDefault()).isFalse();
        // SCG's limiter named with a scenario list without the side by side is no reason to refuse
        assertThat(Flavour.MVC.unsupported("noisy")).isEmpty();
    }

    @Test
    void anUnknownFlavourIsRefusedWithTheChoices() {
        assertThatIllegalArgumentException().isThrownBy(() -> ScenarioRunner.run("--flavour=quarkus"))
                .withMessage("--flavour=quarkus: one of webflux, mvc");
        assertThat(Flavour.of(" MVC ")).isEqualTo(Flavour.MVC);
    }
}
