package dev.ratelimiter.rebalancer;

import java.net.URL;
import java.util.Map;
import java.util.Properties;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * The rebalancer's packaged {@code logback.xml} (issue 36: without one, logback logged Kafka Streams at DEBUG, 6.9 MB
 * in two minutes): read into a logger context of its own, as the jar's logback reads it at start-up.
 */
class RebalancerLoggingTest {

    private static final String ADMIN_METADATA = "org.apache.kafka.clients.admin.internals.AdminMetadataManager";

    @Test
    void thePackagedConfigurationLogsKafkaAndEverythingElseAtInfo() throws JoranException {
        LoggerContext context = configured(Map.of());
        assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getLevel()).isEqualTo(Level.INFO);
        for (String name : new String[] { "org.apache.kafka", "org.apache.kafka.clients.NetworkClient",
                "org.apache.kafka.streams.processor.internals.StreamThread", "dev.ratelimiter.rebalancer" }) {
            assertThat(context.getLogger(name).getEffectiveLevel()).as(name).isEqualTo(Level.INFO);
            assertThat(context.getLogger(name).isDebugEnabled()).as(name).isFalse();
        }
        assertThat(context.getLogger(ADMIN_METADATA).getEffectiveLevel()).as("thousands of lines a second while no "
                + "broker answers").isEqualTo(Level.WARN);
    }

    @Test
    void logLevelAndKafkaLogLevelChangeThemApart() throws JoranException {
        LoggerContext context = configured(Map.of("LOG_LEVEL", "DEBUG", "KAFKA_LOG_LEVEL", "WARN"));
        assertThat(context.getLogger("dev.ratelimiter.rebalancer").getEffectiveLevel()).isEqualTo(Level.DEBUG);
        assertThat(context.getLogger("org.apache.kafka.streams.KafkaStreams").getEffectiveLevel())
                .isEqualTo(Level.WARN);
        assertThat(configured(Map.of("KAFKA_LOG_LEVEL", "DEBUG")).getLogger(ADMIN_METADATA).getEffectiveLevel())
                .as("asked for, Kafka's every logger").isEqualTo(Level.DEBUG);
    }

    @Test
    void aLogLevelThatIsNoLevelIsRefusedByNameRatherThanReadAsDebug() {
        Properties none = new Properties();
        assertThatIllegalArgumentException().isThrownBy(() -> RebalancerSettings.requireLogLevels(none,
                Map.of("LOG_LEVEL", "verbose"))).withMessageContaining("LOG_LEVEL must be one of")
                .withMessageContaining("'verbose'");
        Properties blank = new Properties();
        blank.setProperty("KAFKA_LOG_LEVEL", " ");
        assertThatIllegalArgumentException().isThrownBy(() -> RebalancerSettings.requireLogLevels(blank, Map.of()))
                .withMessageContaining("KAFKA_LOG_LEVEL");
        assertThatNoException().isThrownBy(() -> RebalancerSettings.requireLogLevels(none, Map.of()));
        assertThatNoException().isThrownBy(() -> RebalancerSettings.requireLogLevels(none,
                Map.of("LOG_LEVEL", "debug", "KAFKA_LOG_LEVEL", " Warn ")));
    }

    /** The module's own logback.xml (not a dependency's), with {@code variables} as logback would find them. */
    private static LoggerContext configured(Map<String, String> variables) throws JoranException {
        URL packaged = RegionRebalancerApplication.class.getResource("/logback.xml");
        assertThat(packaged).as("logback.xml in the rebalancer's resources").isNotNull();
        assertThat(packaged.getPath()).endsWith("ratelimit-region-rebalancer/target/classes/logback.xml");
        LoggerContext context = new LoggerContext();
        variables.forEach(context::putProperty);
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(context);
        configurator.doConfigure(packaged);
        return context;
    }
}
