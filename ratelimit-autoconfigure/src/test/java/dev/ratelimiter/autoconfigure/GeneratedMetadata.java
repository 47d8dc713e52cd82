package dev.ratelimiter.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URL;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A {@code META-INF/spring-configuration-metadata.json} document: its properties by name and its hints, and what a
 * {@code @ConfigurationProperties} type binds that it does not describe.
 */
record GeneratedMetadata(Map<String, JsonNode> properties, List<JsonNode> hints) {

    static final String LOCATION = "META-INF/spring-configuration-metadata.json";

    /** The metadata generated beside a class: in the same directory or jar of the class path. */
    static GeneratedMetadata beside(Class<?> type) {
        String root = root(type).toString();
        String document = root.endsWith("/") ? root + LOCATION : "jar:" + root + "!/" + LOCATION;
        try (InputStream in = URI.create(document).toURL().openStream()) {
            return parse(in.readAllBytes());
        }
        catch (IOException ex) {
            throw new UncheckedIOException("No " + LOCATION + " beside " + type.getName() + " (is the configuration "
                    + "processor among the module's annotation processors?)", ex);
        }
    }

    static GeneratedMetadata parse(byte[] json) {
        JsonNode document = JsonMapper.builder().build().readTree(json);
        Map<String, JsonNode> properties = new LinkedHashMap<>();
        document.path("properties").values().forEach(p -> properties.put(p.path("name").asString(), p));
        return new GeneratedMetadata(properties, new ArrayList<>(document.path("hints").values()));
    }

    /** The location of a class path root, for telling a module's own classes from its tests'. */
    static URL root(Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation();
    }

    /** Each path bound into the type that has no entry here, or one without a description, with what is wrong. */
    List<String> undescribed(Class<?> type, Set<String> boundPaths) {
        List<String> problems = new ArrayList<>();
        for (String path : boundPaths) {
            JsonNode entry = properties.get(path);
            if (entry == null) {
                problems.add(path + " (bound by " + type.getSimpleName() + ") has no metadata entry");
            }
            else if (entry.path("description").asString("").isBlank()) {
                problems.add(path + " (bound by " + type.getSimpleName() + ") has no description: javadoc its field");
            }
        }
        return problems;
    }
}
