package dev.ratelimiter.scenarios;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The runner's smoke mode: every scenario and the side-by-side comparison at tiny scale (2 gateway processes, a few
 * seconds each), so that the runner itself cannot rot. Needs sample-gateway/target/sample-gateway.jar.
 */
class ScenarioSmokeTest {

    @Test
    @Timeout(480)
    void smokeRunPassesEveryCheckAndWritesItsSeries() throws Exception {
        Path out = Path.of("target", "scenarios", "smoke-" + System.currentTimeMillis());
        ScenarioRunner.Outcome outcome = ScenarioRunner.run("--smoke", "--out=" + out);

        assertThat(outcome.failures()).as("failed checks; see %s", outcome.summary()).isEmpty();
        assertThat(outcome.results()).extracting(Report.Result::scenario).contains("baseline", "noisy", "flood",
                "botnet", "slow", "store-down", "window-edge", "side-by-side");
        assertThat(outcome.sideBySide()).hasSize(4);
        for (Path file : outcome.seriesFiles()) {
            assertThat(file).exists();
            assertThat(Files.size(file)).as("size of %s", file).isPositive();
        }
        assertThat(outcome.summary()).exists();
        assertThat(Files.readString(outcome.summary())).contains("## Side by side", "### window-edge");
    }
}
