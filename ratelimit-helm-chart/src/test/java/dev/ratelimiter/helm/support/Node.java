package dev.ratelimiter.helm.support;

import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/** Reading parsed YAML by dotted paths: {@code spec.template.spec.containers}. */
public final class Node {

    private Node() {
    }

    /** The value at a dotted path of maps, or null when any step is missing. */
    public static Object at(Object root, String path) {
        Object current = root;
        for (String step : path.split("\\.")) {
            if (!(current instanceof Map<?, ?> map)) {
                return null;
            }
            current = map.get(step);
        }
        return current;
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> map(Object root, String path) {
        Object value = at(root, path);
        if (!(value instanceof Map<?, ?>)) {
            throw new AssertionError("expected a map at " + path + ", found " + value);
        }
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    public static List<Map<String, Object>> list(Object root, String path) {
        Object value = at(root, path);
        if (!(value instanceof List<?>)) {
            throw new AssertionError("expected a list at " + path + ", found " + value);
        }
        return (List<Map<String, Object>>) value;
    }

    /** The one element of a list of maps that satisfies a condition. */
    public static Map<String, Object> only(List<Map<String, Object>> items, Predicate<Map<String, Object>> condition,
            String what) {
        List<Map<String, Object>> found = items.stream().filter(condition).toList();
        if (found.size() != 1) {
            throw new AssertionError("expected exactly one " + what + ", found " + found.size() + " in " + items);
        }
        return found.get(0);
    }

    /** The element of a list of maps whose "name" is this. */
    public static Map<String, Object> named(List<Map<String, Object>> items, String name) {
        return only(items, item -> name.equals(item.get("name")), "entry named '" + name + "'");
    }
}
