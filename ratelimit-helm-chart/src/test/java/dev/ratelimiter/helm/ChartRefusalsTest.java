package dev.ratelimiter.helm;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.helm.support.Fleet;
import dev.ratelimiter.helm.support.Helm;
import dev.ratelimiter.helm.support.StarterValidation;
import org.junit.jupiter.api.Test;
import org.springframework.boot.diagnostics.FailureAnalysis;

import static org.assertj.core.api.Assertions.assertThat;

/** What the chart, its schema and the starter refuse, each with a message naming the value. */
class ChartRefusalsTest {

    @Test
    void aRuleTheStarterRefusesIsCaughtByTheValidationWithTheStartersMessage() {
        // helm does not judge rules: it renders them...
        Fleet fleet = new Fleet(Helm.render(Helm.testValues("invalid-rule.yaml")));
        assertThat(fleet.applicationYml()).contains("burst:");
        // ...and the starter refuses them, as the pod would at start-up.
        StarterValidation.run(fleet.applicationYml(), context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                    .hasMessage("ratelimit.rules.burst.capacity must be at least 1 (the largest burst a client may "
                            + "send), but was 0.");
            FailureAnalysis analysis = StarterValidation.analyze(context.getStartupFailure());
            assertThat(analysis).isNotNull();
            assertThat(analysis.getDescription()).isEqualTo("The rate limit configuration is invalid: "
                    + "ratelimit.rules.burst.capacity must be at least 1 (the largest burst a client may send), "
                    + "but was 0.");
            assertThat(analysis.getAction()).startsWith("Correct ratelimit.rules.burst.capacity");
        });
    }

    @Test
    void aDisruptionBudgetThatWouldBlockDrainsIsRefusedWhenRendering() {
        Helm.Result template = Helm.template(Helm.testValues("blocking-pdb.yaml"));
        assertThat(template.exitCode()).isNotZero();
        assertThat(template.stderr()).contains("podDisruptionBudget.minAvailable is 2, which keeps 2 pod(s) "
                + "available, but the fleet may run only 2 replica(s) (autoscaling.minReplicas): no pod could ever "
                + "be evicted and every node drain would block.");
        // `helm lint` runs templates in lint mode, where `fail` is only logged: install, upgrade and template are
        // what stop on it (helm/README.md says so).
    }

    @Test
    void aPercentageIsRoundedUpAsKubernetesDoes() {
        Helm.Result template = Helm.template(Helm.testValues("blocking-pdb-percent.yaml"));
        assertThat(template.exitCode()).isNotZero();
        assertThat(template.stderr()).contains("podDisruptionBudget.minAvailable is 100%, which keeps 4 pod(s) "
                + "available, but the fleet may run only 4 replica(s) (replicaCount)");

        Helm.Result zero = Helm.template(Helm.testValues("zero-max-unavailable.yaml"));
        assertThat(zero.exitCode()).isNotZero();
        assertThat(zero.stderr()).contains("podDisruptionBudget.maxUnavailable is 0: no pod could ever be evicted");
    }

    @Test
    void theSchemaRefusesBadValuesNamingEachOne() {
        Helm.Result lint = Helm.lint(Helm.testValues("bad-schema.yaml"));
        assertThat(lint.exitCode()).isNotZero();
        assertThat(lint.output()).contains("/replicaCount", "/redis/mode", "standalone", "sentinel", "cluster",
                "/kafka/bootstrapServers", "periodSecond");
    }

    @Test
    void aRedisPasswordCannotBeWrittenIntoValues() {
        Helm.Result lint = Helm.lint(Helm.testValues("literal-password.yaml"));
        assertThat(lint.exitCode()).isNotZero();
        assertThat(lint.output()).contains("/redis/auth", "password");
    }

    @Test
    void inconsistentValuesAreRefusedWithASentence() {
        Helm.Result sentinel = Helm.template(Helm.testValues("sentinel-without-nodes.yaml"));
        assertThat(sentinel.exitCode()).isNotZero();
        assertThat(sentinel.stderr()).contains("redis.mode is sentinel: set redis.sentinel.nodes");

        Helm.Result hpa = Helm.template(Helm.testValues("hpa-min-above-max.yaml"));
        assertThat(hpa.exitCode()).isNotZero();
        assertThat(hpa.stderr()).contains("autoscaling.minReplicas (5) is above autoscaling.maxReplicas (3).");

        Helm.Result noRequest = Helm.template(Helm.testValues("hpa-without-cpu-request.yaml"));
        assertThat(noRequest.exitCode()).isNotZero();
        assertThat(noRequest.stderr()).contains("autoscaling.enabled needs resources.requests.cpu");

        // the default NetworkPolicy would drop the scrape: refused rather than metrics stopping silently
        Helm.Result scrape = Helm.template(Helm.testValues("service-monitor-without-prometheus-peer.yaml"));
        assertThat(scrape.exitCode()).isNotZero();
        assertThat(scrape.stderr()).contains("networkPolicy.managementFrom does not admit your Prometheus");
    }
}
