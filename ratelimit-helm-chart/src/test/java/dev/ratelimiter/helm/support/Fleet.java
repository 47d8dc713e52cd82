package dev.ratelimiter.helm.support;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** The parts of a rendered release the tests look at, by their role. */
public final class Fleet {

    private final Manifests manifests;

    public Fleet(Manifests manifests) {
        this.manifests = manifests;
    }

    public Manifests manifests() {
        return manifests;
    }

    public Map<String, Object> deployment() {
        return manifests.get("Deployment", Helm.FULLNAME);
    }

    public Map<String, Object> podSpec() {
        return Node.map(deployment(), "spec.template.spec");
    }

    public Map<String, Object> podLabels() {
        return Node.map(deployment(), "spec.template.metadata.labels");
    }

    public Map<String, Object> container() {
        return Node.named(Node.list(podSpec(), "containers"), "gateway");
    }

    public List<Map<String, Object>> env() {
        return Node.list(container(), "env");
    }

    public Optional<Map<String, Object>> envVar(String name) {
        return env().stream().filter(e -> name.equals(e.get("name"))).findFirst();
    }

    /** The container port of this name. */
    public int containerPort(String name) {
        return (Integer) Node.named(Node.list(container(), "ports"), name).get("containerPort");
    }

    public Map<String, Object> configMap() {
        return manifests.get("ConfigMap", Helm.FULLNAME);
    }

    /** The application.yml the ConfigMap carries, as text. */
    public String applicationYml() {
        Object text = Node.at(configMap(), "data");
        Object yml = text instanceof Map<?, ?> data ? data.get("application.yml") : null;
        if (!(yml instanceof String string)) {
            throw new AssertionError("the ConfigMap has no application.yml: " + text);
        }
        return string;
    }

    /** The application.yml parsed as YAML. */
    public Map<String, Object> application() {
        return new Yaml(new SafeConstructor(new LoaderOptions())).load(applicationYml());
    }

    public Map<String, Object> publicService() {
        return manifests.get("Service", Helm.FULLNAME);
    }

    public Optional<Map<String, Object>> managementService() {
        return manifests.find("Service", Helm.FULLNAME + "-management");
    }

    public Optional<Map<String, Object>> hpa() {
        return manifests.find("HorizontalPodAutoscaler", Helm.FULLNAME);
    }

    public Optional<Map<String, Object>> pdb() {
        return manifests.find("PodDisruptionBudget", Helm.FULLNAME);
    }

    public Optional<Map<String, Object>> serviceMonitor() {
        return manifests.find("ServiceMonitor", Helm.FULLNAME);
    }

    /** The fewest pods the release runs: the HPA's minimum, else the Deployment's replicas. */
    public int minReplicas() {
        return hpa().map(hpa -> (Integer) Node.at(hpa, "spec.minReplicas"))
                .orElseGet(() -> (Integer) Node.at(deployment(), "spec.replicas"));
    }

    /**
     * Pods a disruption may take at the minimum replica count, as Kubernetes computes it (percentages rounded up
     * in both fields).
     */
    public static int evictableAt(Map<String, Object> pdb, int replicas) {
        Object minAvailable = Node.at(pdb, "spec.minAvailable");
        Object maxUnavailable = Node.at(pdb, "spec.maxUnavailable");
        if (minAvailable != null && maxUnavailable != null) {
            throw new AssertionError("a PodDisruptionBudget may not set both minAvailable and maxUnavailable");
        }
        if (minAvailable != null) {
            return replicas - scaled(minAvailable, replicas);
        }
        if (maxUnavailable != null) {
            return Math.min(replicas, scaled(maxUnavailable, replicas));
        }
        throw new AssertionError("a PodDisruptionBudget needs minAvailable or maxUnavailable");
    }

    private static int scaled(Object value, int replicas) {
        if (value instanceof Integer count) {
            return count;
        }
        String text = String.valueOf(value);
        if (!text.endsWith("%")) {
            throw new AssertionError("not an integer or a percentage: " + value);
        }
        int percent = Integer.parseInt(text.substring(0, text.length() - 1));
        return (percent * replicas + 99) / 100;
    }
}
