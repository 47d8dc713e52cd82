package dev.ratelimiter.helm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.helm.support.Fleet;
import dev.ratelimiter.helm.support.Helm;
import dev.ratelimiter.helm.support.Node;
import dev.ratelimiter.helm.support.StarterValidation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Every values file the operator page tells people to install with: linted, rendered, its rules validated. */
class ChartExamplesTest {

    static Stream<Path> examples() throws IOException {
        try (Stream<Path> files = Files.list(Helm.example("."))) {
            List<Path> all = files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
            assertThat(all).extracting(f -> f.getFileName().toString())
                    .contains("values-standalone.yaml", "values-sentinel.yaml", "values-cluster.yaml");
            return all.stream();
        }
    }

    @ParameterizedTest
    @MethodSource("examples")
    void lintsRendersAndHoldsRulesTheStarterAccepts(Path values) {
        Helm.Result lint = Helm.lint(values);
        assertThat(lint.exitCode()).as(lint.output()).isZero();

        Fleet fleet = new Fleet(Helm.render(values));
        StarterValidation.run(fleet.applicationYml(), context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(RuleSetHolder.class).get().rules()).isNotEmpty();
        });
        fleet.pdb().ifPresent(pdb -> assertThat(Fleet.evictableAt(pdb, fleet.minReplicas()))
                .as("pods a drain may evict at the minimum replica count").isPositive());
        fleet.hpa().ifPresent(hpa -> assertThat((Integer) Node.at(hpa, "spec.minReplicas"))
                .isLessThanOrEqualTo((Integer) Node.at(hpa, "spec.maxReplicas")));
    }

    @Test
    void standaloneRedisIsReachedByHostAndPortWithThePasswordFromASecret() {
        Fleet fleet = new Fleet(Helm.render(Helm.example("values-standalone.yaml")));
        Map<String, Object> redis = Node.map(fleet.application(), "spring.data.redis");
        assertThat(redis).containsEntry("host", "redis-master.data.svc.cluster.local").containsEntry("port", 6379)
                .doesNotContainKeys("url", "sentinel", "cluster", "password");
        assertThat(Node.map(fleet.envVar("SPRING_DATA_REDIS_PASSWORD").orElseThrow(), "valueFrom.secretKeyRef"))
                .isEqualTo(Map.of("name", "redis-auth", "key", "redis-password"));
        assertThat(Node.at(fleet.application(), "ratelimit.events.kafka.bootstrap-servers")).asString()
                .startsWith("kafka-0.");
    }

    @Test
    void redisClusterNodesAndTopologyRefreshAreConfigured() {
        Fleet fleet = new Fleet(Helm.render(Helm.example("values-cluster.yaml")));
        Map<String, Object> redis = Node.map(fleet.application(), "spring.data.redis");
        assertThat(Node.at(redis, "cluster.nodes")).asList().hasSize(3);
        assertThat(Node.at(redis, "cluster.max-redirects")).isEqualTo(3);
        assertThat(Node.at(redis, "lettuce.cluster.refresh.adaptive")).isEqualTo(true);
        assertThat(redis).doesNotContainKeys("host", "url", "sentinel", "database");
        // No Kafka configured: no events to Kafka.
        assertThat(Node.at(fleet.application(), "ratelimit.events")).isNull();
        assertThat(Node.at(fleet.deployment(), "spec.replicas")).isEqualTo(6);
        assertThat(Node.at(fleet.application(), "ratelimit.store.expected-instances"))
                .as("a pod started while Redis is down assumes the replica count").isEqualTo(6);
    }

    @Test
    void withTheAutoscalerAPodStartedDuringAnOutageAssumesItsMaximum() {
        Fleet fleet = new Fleet(Helm.render(Helm.example("values-sentinel.yaml")));
        assertThat(Node.at(fleet.application(), "ratelimit.store.expected-instances")).isEqualTo(12);
    }

    @Test
    void oneReplicaWithTheImagesOwnConfigurationKeptAndAManagementService() {
        Fleet fleet = new Fleet(Helm.render(Helm.testValues("single-replica.yaml")));
        assertThat(Node.at(fleet.deployment(), "spec.replicas")).isEqualTo(1);
        assertThat(Node.at(fleet.application(), "ratelimit.store.expected-instances")).isEqualTo(1);
        assertThat(Fleet.evictableAt(fleet.pdb().orElseThrow(), 1)).isEqualTo(1);
        assertThat(fleet.envVar("SPRING_CONFIG_ADDITIONAL_LOCATION").orElseThrow().get("value"))
                .isEqualTo("file:/etc/ratelimit-gateway/config/application.yml");
        assertThat(fleet.envVar("SPRING_CONFIG_LOCATION")).isEmpty();
        assertThat(fleet.managementService()).isPresent();
        assertThat(fleet.serviceMonitor()).isEmpty();
        List<Map<String, Object>> required = Node.list(fleet.podSpec(),
                "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution");
        assertThat(required).extracting(term -> term.get("topologyKey")).containsExactly("topology.kubernetes.io/zone");
        assertThat(Node.at(fleet.podSpec(), "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution"))
                .isNull();

        Map<String, Object> application = fleet.application();
        assertThat(Node.list(application, "spring.cloud.gateway.server.webflux.routes")).singleElement()
                .satisfies(route -> assertThat(route).containsEntry("id", "orders"));
        assertThat(Node.at(application,
                "resilience4j.circuitbreaker.instances.ratelimit-redis.wait-duration-in-open-state")).isEqualTo("5s");
        // extraConfig adds to the chart's settings, it does not replace them.
        assertThat(Node.at(application, "spring.data.redis.host")).isEqualTo("redis");
        assertThat(Node.at(application, "spring.data.redis.username")).isEqualTo("gateway");
        assertThat(Node.at(application, "spring.data.redis.ssl.enabled")).isEqualTo(true);
        assertThat(Node.at(application, "spring.application.name")).isEqualTo(Helm.FULLNAME);
        assertThat(Node.map(fleet.envVar("SPRING_DATA_REDIS_PASSWORD").orElseThrow(), "valueFrom.secretKeyRef"))
                .isEqualTo(Map.of("name", "redis-auth", "key", "redis-password"));
        StarterValidation.run(fleet.applicationYml(), context -> assertThat(context).hasNotFailed());
    }
}
