package dev.ratelimiter.helm;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.LoadShedders;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.helm.support.Fleet;
import dev.ratelimiter.helm.support.Helm;
import dev.ratelimiter.helm.support.Node;
import dev.ratelimiter.helm.support.StarterValidation;
import dev.ratelimiter.kafka.KafkaEventSink;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chart with non-default values (helm/examples/values-sentinel.yaml): Redis behind Sentinel with its password
 * from a Secret, Kafka, the autoscaler, a ServiceMonitor, and rules of its own.
 */
class ChartSentinelValuesTest {

    private static final Path VALUES = Helm.example("values-sentinel.yaml");

    private static Fleet fleet;

    @BeforeAll
    static void render() {
        fleet = new Fleet(Helm.render(VALUES));
    }

    @Test
    void lintsStrictly() {
        Helm.Result lint = Helm.lint(VALUES);
        assertThat(lint.exitCode()).as(lint.output()).isZero();
        assertThat(lint.stdout()).contains("0 chart(s) failed");
    }

    @Test
    void theAutoscalerOwnsTheReplicaCount() {
        Map<String, Object> hpa = fleet.hpa().orElseThrow();
        assertThat(hpa.get("apiVersion")).isEqualTo("autoscaling/v2");
        assertThat(Node.at(hpa, "spec.minReplicas")).isEqualTo(3);
        assertThat(Node.at(hpa, "spec.maxReplicas")).isEqualTo(12);
        assertThat(Node.map(hpa, "spec.scaleTargetRef")).containsEntry("kind", "Deployment")
                .containsEntry("name", Helm.FULLNAME).containsEntry("apiVersion", "apps/v1");
        Map<String, Object> cpu = Node.list(hpa, "spec.metrics").get(0);
        assertThat(Node.at(cpu, "resource.name")).isEqualTo("cpu");
        assertThat(Node.at(cpu, "resource.target.averageUtilization")).isEqualTo(65);
        assertThat(Node.at(hpa, "spec.behavior.scaleDown.stabilizationWindowSeconds")).isEqualTo(300);
        // A replicas field would fight the autoscaler on every upgrade.
        assertThat(Node.map(fleet.deployment(), "spec")).doesNotContainKey("replicas");
    }

    @Test
    void theDisruptionBudgetStaysBelowTheAutoscalersMinimum() {
        Map<String, Object> pdb = fleet.pdb().orElseThrow();
        assertThat(pdb.get("apiVersion")).isEqualTo("policy/v1");
        assertThat(Node.at(pdb, "spec.minAvailable")).isEqualTo(2);
        assertThat((Integer) Node.at(pdb, "spec.minAvailable")).isLessThan(fleet.minReplicas());
        assertThat(Fleet.evictableAt(pdb, fleet.minReplicas())).isEqualTo(1);
    }

    @Test
    void theServiceMonitorScrapesPrometheusOnTheManagementPortThroughAnInternalService() {
        Map<String, Object> monitor = fleet.serviceMonitor().orElseThrow();
        assertThat(monitor.get("apiVersion")).isEqualTo("monitoring.coreos.com/v1");
        assertThat(Node.map(monitor, "metadata.labels")).containsEntry("release", "kube-prometheus-stack");
        Map<String, Object> endpoint = Node.list(monitor, "spec.endpoints").get(0);
        assertThat(endpoint).containsEntry("port", "management").containsEntry("path", "/actuator/prometheus");
        assertThat(Node.at(monitor, "spec.namespaceSelector.matchNames")).isEqualTo(List.of("gateway"));

        Map<String, Object> management = fleet.managementService().orElseThrow();
        assertThat(Node.at(management, "spec.type")).isEqualTo("ClusterIP");
        assertThat(Node.map(management, "metadata.labels"))
                .containsAllEntriesOf(Node.map(monitor, "spec.selector.matchLabels"));
        assertThat(Node.map(fleet.publicService(), "metadata.labels").entrySet()
                .containsAll(Node.map(monitor, "spec.selector.matchLabels").entrySet()))
                .as("the ServiceMonitor must not select the public Service").isFalse();
        Map<String, Object> port = Node.named(Node.list(management, "spec.ports"), "management");
        assertThat(port).containsEntry("port", 8081).containsEntry("targetPort", "management");

        // The public Service still carries the traffic port only.
        assertThat(Node.list(fleet.publicService(), "spec.ports")).extracting(p -> p.get("name"))
                .containsExactly("http");
    }

    @Test
    void redisIsFoundThroughTheSentinelsWithThePasswordFromASecret() {
        Map<String, Object> redis = Node.map(fleet.application(), "spring.data.redis");
        assertThat(Node.at(redis, "sentinel.master")).isEqualTo("mymaster");
        assertThat(Node.at(redis, "sentinel.nodes")).isEqualTo(List.of(
                "redis-node-0.redis-headless.data.svc.cluster.local:26379",
                "redis-node-1.redis-headless.data.svc.cluster.local:26379",
                "redis-node-2.redis-headless.data.svc.cluster.local:26379"));
        assertThat(redis).doesNotContainKeys("host", "url", "password", "cluster");

        Map<String, Object> password = fleet.envVar("SPRING_DATA_REDIS_PASSWORD").orElseThrow();
        assertThat(password).doesNotContainKey("value");
        assertThat(Node.map(password, "valueFrom.secretKeyRef"))
                .isEqualTo(Map.of("name", "redis-auth", "key", "redis-password"));
        // No environment variable anywhere carries a literal password.
        assertThat(fleet.env()).filteredOn(e -> String.valueOf(e.get("name")).contains("PASSWORD"))
                .allSatisfy(e -> assertThat(e).doesNotContainKey("value"));
        assertThat(fleet.applicationYml()).doesNotContainIgnoringCase("password");
    }

    @Test
    void decisionEventsGoToTheConfiguredBrokers() {
        Map<String, Object> kafka = Node.map(fleet.application(), "ratelimit.events.kafka");
        assertThat(kafka).containsEntry("bootstrap-servers",
                "kafka-0.kafka-headless.data.svc.cluster.local:9092,kafka-1.kafka-headless.data.svc.cluster.local:9092")
                .containsEntry("topic", "ratelimit.decisions");
        // Set beside the rules' own events settings, not instead of them.
        assertThat(Node.at(fleet.application(), "ratelimit.events.region")).isEqualTo("eu-west-1");
    }

    @Test
    void theConfigMapHoldsTheCustomRulesAndTheStarterAcceptsThem() {
        StarterValidation.run(fleet.applicationYml(), context -> {
            assertThat(context).hasNotFailed();
            RuleSet rules = context.getBean(RuleSetHolder.class).get();
            // The chart's default tier was removed with `free: null`; keys nobody lists share the chart's
            // per-address bucket (the tiers' keys come from the Secret, which the pod reads on top).
            assertThat(rules.rules()).containsOnlyKeys("basic.default", "basic.reports", "enterprise.default",
                    "basic-hourly", "per-ip", "login-cap", "reports-in-progress", RuleSet.UNKNOWN_KEYS);
            assertThat(rules.defaultTier()).isEqualTo("basic");
            assertThat(rules.enforced("basic")).isTrue();
            assertThat(rules.enforced("enterprise")).isFalse();
            assertThat(rules.rules().get("per-ip").mode()).isEqualTo(Mode.SHADOW);
            // Large numbers survive helm's values handling and toYaml exactly.
            assertThat(rules.rules().get("enterprise.default").limit()).isInstanceOfSatisfying(
                    TokenBucketLimit.class, limit -> assertThat(limit.capacity()).isEqualTo(5_000_000));

            assertThat(context.getBean(LoadShedders.class).all()).extracting(LoadShedder::upstream)
                    .containsExactly("demo");
            assertThat(context.getBean(LoadShedders.class).byRoute()).containsOnlyKeys("demo-api", "demo-reports");
            assertThat(context).hasSingleBean(KafkaEventSink.class);
        });
    }

    @Test
    void credentialsOfTheRulesComeFromASecretLoadedAfterTheConfigMap() {
        assertThat(fleet.envVar("SPRING_CONFIG_LOCATION").orElseThrow().get("value")).isEqualTo(
                "file:/etc/ratelimit-gateway/config/application.yml,file:/etc/ratelimit-gateway/secret/application.yml");
        Map<String, Object> volume = Node.named(Node.list(fleet.podSpec(), "volumes"), "secret-config");
        assertThat(Node.at(volume, "secret.secretName")).isEqualTo("ratelimit-api-keys");
        assertThat(Node.named(Node.list(fleet.container(), "volumeMounts"), "secret-config").get("mountPath"))
                .isEqualTo("/etc/ratelimit-gateway/secret");
    }

    @Test
    void podsStillSpreadAcrossZones() {
        List<Map<String, Object>> preferred = Node.list(fleet.podSpec(),
                "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution");
        assertThat(preferred).extracting(term -> Node.at(term, "podAffinityTerm.topologyKey"))
                .contains("topology.kubernetes.io/zone");
    }
}
