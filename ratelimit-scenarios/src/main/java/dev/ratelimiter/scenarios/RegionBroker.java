package dev.ratelimiter.scenarios;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * One Kafka node (broker and KRaft controller in one) in this JVM, on loopback, standing for the bus the regions and
 * the rebalancer share (in production each region has its own cluster, mirrored), with the two topics of region
 * shares created up front: gateways never create them, and the shares topic must be compacted.
 *
 * <p>Kafka's own server rather than spring-kafka-test's {@code EmbeddedKafkaKraftBroker}: that one's test kit binds
 * its listeners to every interface, whatever the listeners are configured to.
 */
final class RegionBroker implements AutoCloseable {

    private final Path directory;
    private final KafkaRaftServer server;
    private final String bootstrapServers;

    /** Formats a fresh log directory and starts on {@code port} (clients) and {@code controllerPort}. */
    RegionBroker(int port, int controllerPort) {
        this.bootstrapServers = "127.0.0.1:" + port;
        try {
            this.directory = Files.createTempDirectory("scenario-kafka");
            Properties config = config(port, controllerPort, directory.resolve("log"));
            Path file = directory.resolve("server.properties");
            try (Writer out = Files.newBufferedWriter(file)) {
                config.store(out, "the regions scenario's broker");
            }
            int formatted = StorageTool.execute(new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c",
                    file.toString()}, new PrintStream(OutputStream.nullOutputStream()));
            if (formatted != 0) {
                throw new IllegalStateException("formatting Kafka's log directory " + directory + " failed (" + formatted
                        + ")");
            }
            this.server = new KafkaRaftServer(KafkaConfig.fromProps(config), Time.SYSTEM);
            server.startup();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        try {
            createTopics();
        }
        catch (RuntimeException ex) {
            close();
            throw ex;
        }
    }

    private static Properties config(int port, int controllerPort, Path logDir) {
        Properties config = new Properties();
        config.putAll(Map.of("process.roles", "broker,controller", "node.id", "1",
                "controller.quorum.voters", "1@127.0.0.1:" + controllerPort,
                "listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners", "PLAINTEXT://127.0.0.1:" + port,
                "controller.listener.names", "CONTROLLER",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name", "PLAINTEXT", "log.dirs", logDir.toString()));
        // one node: every internal topic on one replica; the rebalancer's group formed without waiting
        config.putAll(Map.of("offsets.topic.replication.factor", "1", "offsets.topic.num.partitions", "1",
                "transaction.state.log.replication.factor", "1", "transaction.state.log.min.isr", "1",
                "share.coordinator.state.topic.replication.factor", "1", "share.coordinator.state.topic.min.isr", "1",
                "group.initial.rebalance.delay.ms", "0"));
        return config;
    }

    private void createTopics() {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            // one partition each: one client, so every usage and share record of its bucket is in one ordered log
            admin.createTopics(List.of(new NewTopic(GlobalLimit.USAGE_TOPIC, 1, (short) 1),
                    new NewTopic(GlobalLimit.SHARES_TOPIC, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get();
        }
        catch (ExecutionException ex) {
            throw new IllegalStateException("creating the region topics failed", ex.getCause());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    String bootstrapServers() {
        return bootstrapServers;
    }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
        try {
            RegionDeployment.deleteTree(directory);
        }
        catch (IOException ex) {
            // a temporary directory left behind: not worth failing the run for
            System.err.println("could not delete " + directory + ": " + ex);
        }
    }
}
