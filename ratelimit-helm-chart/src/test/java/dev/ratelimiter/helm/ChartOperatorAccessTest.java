package dev.ratelimiter.helm;

import java.util.Base64;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.helm.support.Fleet;
import dev.ratelimiter.helm.support.Helm;
import dev.ratelimiter.helm.support.Node;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who can reach the operator endpoints in the rendered chart: authentication on by default with passwords from a
 * Secret (the chart's own, random, or an existing one), never in the ConfigMap; a NetworkPolicy on by default that
 * admits the management port only from the peers configured.
 */
class ChartOperatorAccessTest {

    @Test
    void byDefaultTheEndpointsAreAuthenticatedWithRandomPasswordsFromTheChartsSecret() {
        Fleet fleet = new Fleet(Helm.render());
        Map<String, Object> secret = fleet.manifests().get("Secret", Helm.FULLNAME + "-credentials");
        String admin = decode(Node.at(secret, "data.admin-password"));
        String viewer = decode(Node.at(secret, "data.viewer-password"));
        assertThat(admin).hasSize(32).isNotEqualTo(viewer);
        assertThat(viewer).hasSize(32);
        assertThat(Node.at(secret, "metadata.annotations")).isEqualTo(Map.of("helm.sh/resource-policy", "keep"));
        String clientIdSecret = decode(Node.at(secret, "data.client-id-secret"));
        assertThat(clientIdSecret).hasSize(48);
        assertThat(Node.at(fleet.envVar("RATELIMIT_CLIENTID_SECRET").orElseThrow(), "valueFrom.secretKeyRef"))
                .isEqualTo(Map.of("name", Helm.FULLNAME + "-credentials", "key", "client-id-secret"));
        assertThat(Node.at(fleet.envVar("RATELIMIT_CLIENTID_PREVIOUSSECRET").orElseThrow(),
                "valueFrom.secretKeyRef")).isEqualTo(Map.of("name", Helm.FULLNAME + "-credentials",
                        "key", "client-id-previous-secret", "optional", true));
        assertThat(fleet.applicationYml()).doesNotContain(clientIdSecret);
        // a second rendering (a fresh install) gets other passwords
        assertThat(decode(Node.at(new Fleet(Helm.render()).manifests().get("Secret", Helm.FULLNAME + "-credentials"),
                "data.admin-password"))).isNotEqualTo(admin);

        assertThat(Node.at(fleet.envVar("RATELIMIT_MANAGEMENT_SECURITY_ADMIN_PASSWORD").orElseThrow(),
                "valueFrom.secretKeyRef")).isEqualTo(Map.of("name", Helm.FULLNAME + "-credentials",
                        "key", "admin-password"));
        assertThat(Node.at(fleet.envVar("RATELIMIT_MANAGEMENT_SECURITY_VIEWER_PASSWORD").orElseThrow(),
                "valueFrom.secretKeyRef")).isEqualTo(Map.of("name", Helm.FULLNAME + "-credentials",
                        "key", "viewer-password", "optional", true));
        assertThat(fleet.applicationYml()).doesNotContain(admin).doesNotContain(viewer).doesNotContain("password");
        assertThat(Node.at(fleet.application(), "ratelimit.management.security")).isEqualTo(Map.of("enabled", true,
                "admin", Map.of("username", "ratelimit-admin"), "viewer", Map.of("username", "ratelimit-viewer")));
        assertThat(Node.at(fleet.application(), "management.endpoint.health.show-details"))
                .isEqualTo("when-authorized");
        // only the two accounts count as authorized, never an anonymous principal another security chain may add
        assertThat(Node.at(fleet.application(), "management.endpoint.health.roles"))
                .isEqualTo(List.of("RATELIMIT_VIEWER", "RATELIMIT_ADMIN"));
    }

    @Test
    void anExistingSecretIsUsedAndNoneIsCreated() {
        Fleet fleet = new Fleet(Helm.render(Helm.testValues("auth-existing-secret.yaml")));
        assertThat(fleet.manifests().ofKind("Secret")).isEmpty();
        assertThat(Node.at(fleet.envVar("RATELIMIT_MANAGEMENT_SECURITY_ADMIN_PASSWORD").orElseThrow(),
                "valueFrom.secretKeyRef")).isEqualTo(Map.of("name", "ops-credentials", "key", "admin"));
        assertThat(Node.at(fleet.envVar("RATELIMIT_MANAGEMENT_SECURITY_VIEWER_PASSWORD").orElseThrow(),
                "valueFrom.secretKeyRef.key")).isEqualTo("viewer");
        assertThat(Node.at(fleet.envVar("RATELIMIT_CLIENTID_SECRET").orElseThrow(), "valueFrom.secretKeyRef"))
                .isEqualTo(Map.of("name", "ops-credentials", "key", "client-id"));
    }

    @Test
    void settingsOfYourOwnUnderRatelimitManagementAreKept() {
        Fleet fleet = new Fleet(Helm.render(Helm.testValues("own-management-settings.yaml")));
        assertThat(Node.at(fleet.application(), "ratelimit.management.security")).isEqualTo(Map.of("enabled", true,
                "admin", Map.of("username", "ratelimit-admin"), "viewer", Map.of("username", "ratelimit-viewer"),
                "public-endpoints", List.of("health")));
    }

    @Test
    void switchedOffNothingIsReadFromASecret() {
        Fleet fleet = new Fleet(Helm.render(Helm.testValues("auth-off.yaml")));
        assertThat(fleet.manifests().ofKind("Secret")).isEmpty();
        assertThat(fleet.manifests().ofKind("NetworkPolicy")).isEmpty();
        assertThat(fleet.envVar("RATELIMIT_MANAGEMENT_SECURITY_ADMIN_PASSWORD")).isEmpty();
        assertThat(fleet.envVar("RATELIMIT_CLIENTID_SECRET")).isEmpty();
        assertThat(Node.at(fleet.application(), "ratelimit.management.security")).isEqualTo(Map.of("enabled", false));
    }

    @Test
    void theNetworkPolicyAdmitsTrafficFromAnyoneAndTheManagementPortOnlyFromTheLabelledPods() {
        Fleet fleet = new Fleet(Helm.render());
        Map<String, Object> policy = fleet.manifests().get("NetworkPolicy", Helm.FULLNAME);
        assertThat(Node.at(policy, "spec.podSelector.matchLabels")).isEqualTo(Node.at(fleet.deployment(),
                "spec.selector.matchLabels"));
        assertThat(Node.at(policy, "spec.policyTypes")).isEqualTo(List.of("Ingress"));
        List<Map<String, Object>> ingress = Node.list(policy, "spec.ingress");
        assertThat(ingress).hasSize(2);
        assertThat(ingress.get(0)).isEqualTo(Map.of("ports", List.of(Map.of("port", "http", "protocol", "TCP"))));
        assertThat(ingress.get(1)).isEqualTo(Map.of("ports", List.of(Map.of("port", "management", "protocol", "TCP")),
                "from", List.of(Map.of("podSelector", Map.of("matchLabels",
                        Map.of("ratelimit.dev/management-access", "true"))))));
        // the named ports exist on the container
        assertThat(fleet.containerPort("http")).isEqualTo(8080);
        assertThat(fleet.containerPort("management")).isEqualTo(8081);
    }

    @Test
    void thePeersAreConfigurable() {
        Fleet fleet = new Fleet(Helm.render(Helm.testValues("network-policy-peers.yaml")));
        List<Map<String, Object>> ingress = Node.list(fleet.manifests().get("NetworkPolicy", Helm.FULLNAME),
                "spec.ingress");
        assertThat(Node.at(ingress.get(0), "from")).isEqualTo(List.of(Map.of("namespaceSelector",
                Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", "ingress-nginx")))));
        assertThat(Node.at(ingress.get(1), "from")).isEqualTo(List.of(Map.of("namespaceSelector",
                Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", "monitoring")))));
    }

    static String decode(Object base64) {
        return new String(Base64.getDecoder().decode((String) base64));
    }
}
