package dev.ratelimiter.scenarios;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The llm-tokens scenario at smoke scale, through the sample gateway's jar (sample-gateway/target/sample-gateway.jar):
 * every check passes — each client charged within its limit and the documented overshoot, its burst admitted, refused
 * once its tokens ran out — and its series and chart are written.
 */
class LlmTokensScenarioTest {

    @Test
    @Timeout(240)
    void tokensChargedPerClientStayWithinTheLimitAndTheChartIsWritten() throws Exception {
        Path out = Path.of("target", "scenarios", "llm-tokens-" + System.currentTimeMillis());
        ScenarioRunner.Outcome outcome = ScenarioRunner.run("--smoke", "--scenario=llm-tokens", "--seconds=8",
                "--out=" + out);

        assertThat(outcome.results()).extracting(Report.Result::scenario).containsExactly("llm-tokens");
        assertThat(outcome.failures()).as("failed checks; see %s", outcome.summary()).isEmpty();
        assertThat(outcome.results().get(0).checks()).hasSize(12);
        for (Path file : outcome.seriesFiles()) {
            assertThat(file).exists();
            assertThat(Files.size(file)).as("size of %s", file).isPositive();
        }
        assertThat(Files.readString(out.resolve("llm-tokens.csv"))).startsWith("second,tokens_charged,"
                + "limit_per_second");
    }
}
