package dev.ratelimiter.helm.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** The Kubernetes objects of a {@code helm template} output, parsed with SnakeYAML. */
public final class Manifests {

    private final List<Map<String, Object>> objects;

    private Manifests(List<Map<String, Object>> objects) {
        this.objects = objects;
    }

    @SuppressWarnings("unchecked")
    public static Manifests parse(String multiDocumentYaml) {
        List<Map<String, Object>> objects = new ArrayList<>();
        Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
        for (Object document : yaml.loadAll(multiDocumentYaml)) {
            if (document == null) {
                continue;
            }
            if (!(document instanceof Map<?, ?> map) || !map.containsKey("kind")) {
                throw new AssertionError("helm rendered a document that is not a Kubernetes object: " + document);
            }
            objects.add((Map<String, Object>) map);
        }
        return new Manifests(objects);
    }

    public List<Map<String, Object>> all() {
        return objects;
    }

    public List<Map<String, Object>> ofKind(String kind) {
        return objects.stream().filter(object -> kind.equals(object.get("kind"))).toList();
    }

    public Optional<Map<String, Object>> find(String kind, String name) {
        return ofKind(kind).stream().filter(object -> name.equals(Node.at(object, "metadata.name"))).findFirst();
    }

    public Map<String, Object> get(String kind, String name) {
        return find(kind, name).orElseThrow(() -> new AssertionError("no " + kind + " named " + name + " in "
                + objects.stream().map(o -> o.get("kind") + "/" + Node.at(o, "metadata.name")).toList()));
    }

    /** The only object of a kind. */
    public Map<String, Object> one(String kind) {
        List<Map<String, Object>> found = ofKind(kind);
        if (found.size() != 1) {
            throw new AssertionError("expected one " + kind + ", found " + found.size());
        }
        return found.get(0);
    }
}
