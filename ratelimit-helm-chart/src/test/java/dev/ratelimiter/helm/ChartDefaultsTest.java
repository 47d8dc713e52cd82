package dev.ratelimiter.helm;

import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.UnknownApiKeyPolicy;
import dev.ratelimiter.helm.support.Fleet;
import dev.ratelimiter.helm.support.Helm;
import dev.ratelimiter.helm.support.HelmBinary;
import dev.ratelimiter.helm.support.Node;
import dev.ratelimiter.helm.support.StarterValidation;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The chart with its default values, linted and rendered by a real helm. */
class ChartDefaultsTest {

    private static Fleet fleet;

    @BeforeAll
    static void render() {
        fleet = new Fleet(Helm.render());
    }

    @Test
    void aRealHelmRunsTheChecks() {
        assertThat(HelmBinary.get()).isExecutable();
        assertThat(HelmBinary.version()).matches("v([3-9]|[1-9][0-9])\\..*");
        System.out.println("helm " + HelmBinary.version() + " at " + HelmBinary.get());
    }

    @Test
    void lintsStrictly() {
        Helm.Result lint = Helm.lint();
        assertThat(lint.exitCode()).as(lint.output()).isZero();
        assertThat(lint.stdout()).contains("1 chart(s) linted, 0 chart(s) failed");
    }

    @Test
    void rendersTheFleetAndNothingOptional() {
        assertThat(fleet.manifests().all()).extracting(o -> o.get("kind")).containsExactlyInAnyOrder(
                "Deployment", "Service", "ConfigMap", "PodDisruptionBudget", "ServiceAccount", "Secret",
                "NetworkPolicy");
        assertThat(fleet.serviceMonitor()).isEmpty();
        assertThat(fleet.hpa()).isEmpty();
        assertThat(fleet.managementService()).isEmpty();
        assertThat(Node.at(fleet.deployment(), "spec.replicas")).isEqualTo(3);
    }

    @Test
    void probesAskTheHealthGroupsOnTheManagementPort() {
        Map<String, Object> container = fleet.container();
        assertThat(Node.at(container, "readinessProbe.httpGet.path")).isEqualTo("/actuator/health/readiness");
        assertThat(Node.at(container, "readinessProbe.httpGet.port")).isEqualTo("management");
        assertThat(Node.at(container, "livenessProbe.httpGet.path")).isEqualTo("/actuator/health/liveness");
        assertThat(Node.at(container, "livenessProbe.httpGet.port")).isEqualTo("management");
        assertThat(Node.at(container, "startupProbe.httpGet.path")).isEqualTo("/actuator/health/liveness");
        assertThat(Node.at(container, "startupProbe.httpGet.port")).isEqualTo("management");

        // The named port is the one the application's management server listens on, on every address.
        Map<String, Object> application = fleet.application();
        assertThat(fleet.containerPort("management")).isEqualTo(8081)
                .isEqualTo(Node.at(application, "management.server.port"));
        assertThat(Node.at(application, "management.server.address")).isEqualTo("0.0.0.0");
        assertThat(fleet.containerPort("http")).isEqualTo(8080).isEqualTo(Node.at(application, "server.port"));
    }

    @Test
    void theHealthGroupsHoldOnlyTheAvailabilityStateSoRedisAndKafkaCannotTakeThemDown() {
        Map<String, Object> application = fleet.application();
        assertThat(Node.at(application, "management.endpoint.health.probes.enabled")).isEqualTo(true);
        assertThat(Node.at(application, "management.endpoint.health.group.readiness.include"))
                .isEqualTo("readinessState");
        assertThat(Node.at(application, "management.endpoint.health.group.liveness.include"))
                .isEqualTo("livenessState");
        assertThat(Node.at(application, "management.health.redis.enabled")).isEqualTo(false);
        assertThat(fleet.applicationYml()).doesNotContainIgnoringCase("include: redis")
                .doesNotContainIgnoringCase("include: kafka");
    }

    @Test
    void thePublicServiceCarriesTrafficOnlyNeverTheManagementPort() {
        Map<String, Object> service = fleet.publicService();
        List<Map<String, Object>> ports = Node.list(service, "spec.ports");
        assertThat(ports).hasSize(1);
        assertThat(ports.get(0)).containsEntry("name", "http").containsEntry("port", 8080)
                .containsEntry("targetPort", "http");
        assertThat(ports).noneMatch(p -> "management".equals(p.get("targetPort")) || Integer.valueOf(8081)
                .equals(p.get("targetPort")) || Integer.valueOf(8081).equals(p.get("port")));
        assertThat(Node.map(service, "spec.selector")).isEqualTo(
                Map.of("app.kubernetes.io/name", "ratelimit-gateway", "app.kubernetes.io/instance", "gw"));
        assertThat(fleet.podLabels()).containsAllEntriesOf(Node.map(service, "spec.selector"));
        // The operator endpoints exist only on the management port.
        assertThat(String.valueOf(Node.at(fleet.application(), "management.endpoints.web.exposure.include")))
                .contains("ratelimit", "ratelimitcontrol", "health", "prometheus");
    }

    @Test
    void thePodReadsOnlyTheChartsConfigurationMountedFromTheConfigMap() {
        assertThat(fleet.envVar("SPRING_CONFIG_LOCATION")).hasValueSatisfying(env -> assertThat(env.get("value"))
                .isEqualTo("file:/etc/ratelimit-gateway/config/application.yml"));
        assertThat(fleet.envVar("SPRING_CONFIG_ADDITIONAL_LOCATION")).isEmpty();
        Map<String, Object> mount = Node.named(Node.list(fleet.container(), "volumeMounts"), "config");
        assertThat(mount.get("mountPath")).isEqualTo("/etc/ratelimit-gateway/config");
        Map<String, Object> volume = Node.named(Node.list(fleet.podSpec(), "volumes"), "config");
        assertThat(Node.at(volume, "configMap.name")).isEqualTo(Helm.FULLNAME);
        assertThat(Node.at(fleet.deployment(), "spec.template.metadata.annotations"))
                .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP).containsKey("checksum/config");
    }

    @Test
    void theConfigMapHoldsRulesTheStarterAccepts() {
        StarterValidation.run(fleet.applicationYml(), context -> {
            assertThat(context).hasNotFailed();
            RuleSet rules = context.getBean(RuleSetHolder.class).get();
            assertThat(rules.rules()).containsOnlyKeys("free.default", RuleSet.UNKNOWN_KEYS);
            assertThat(rules.defaultTier()).isEqualTo("free");
            assertThat(rules.rules().get("free.default").limit()).isEqualTo(
                    new TokenBucketLimit(10, 5, java.time.Duration.ofSeconds(1)));
            // keys nobody listed: one bucket of 10, refilled at 1/s, per client address
            assertThat(rules.unknownApiKeys()).isEqualTo(UnknownApiKeyPolicy.PER_ADDRESS);
            assertThat(rules.rules().get(RuleSet.UNKNOWN_KEYS).limit()).isEqualTo(
                    new TokenBucketLimit(10, 1, java.time.Duration.ofSeconds(1)));
        });
        assertThat(Node.at(fleet.application(), "ratelimit.store.type")).isEqualTo("redis");
        // in a pod, Boot would otherwise have the server take the client's address from its own X-Forwarded-For,
        // and the starter refuses per-address buckets then
        assertThat(Node.at(fleet.application(), "server.forward-headers-strategy")).isEqualTo("none");
    }

    @Test
    void redisIsReachedByHostAndPortWithoutAnyPasswordInTheConfigMap() {
        Map<String, Object> redis = Node.map(fleet.application(), "spring.data.redis");
        assertThat(redis).containsEntry("host", "redis").containsEntry("port", 6379).doesNotContainKey("url")
                .doesNotContainKey("password");
        assertThat(fleet.applicationYml()).doesNotContainIgnoringCase("password");
        assertThat(fleet.envVar("SPRING_DATA_REDIS_PASSWORD")).isEmpty();
    }

    @Test
    void podsSpreadAcrossZonesByPreference() {
        List<Map<String, Object>> preferred = Node.list(fleet.podSpec(),
                "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution");
        Map<String, Object> zone = Node.only(preferred,
                term -> "topology.kubernetes.io/zone".equals(Node.at(term, "podAffinityTerm.topologyKey")),
                "zone anti-affinity term");
        assertThat(fleet.podLabels()).containsAllEntriesOf(
                Node.map(zone, "podAffinityTerm.labelSelector.matchLabels"));
        assertThat(Node.at(fleet.podSpec(), "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"))
                .isNull();
    }

    @Test
    void theDisruptionBudgetAlwaysLetsADrainEvictAPod() {
        Map<String, Object> pdb = fleet.pdb().orElseThrow();
        assertThat(Node.at(pdb, "spec.maxUnavailable")).isEqualTo(1);
        assertThat(Fleet.evictableAt(pdb, fleet.minReplicas())).isPositive();
        assertThat(fleet.podLabels()).containsAllEntriesOf(Node.map(pdb, "spec.selector.matchLabels"));
    }

    @Test
    void rollingUpdatesKeepEveryServingPodUntilItsReplacementIsReady() {
        assertThat(Node.at(fleet.deployment(), "spec.strategy.rollingUpdate.maxUnavailable")).isEqualTo(0);
        assertThat(Node.at(fleet.container(), "securityContext.readOnlyRootFilesystem")).isEqualTo(true);
        assertThat(Node.at(fleet.podSpec(), "automountServiceAccountToken")).isEqualTo(false);
    }
}
