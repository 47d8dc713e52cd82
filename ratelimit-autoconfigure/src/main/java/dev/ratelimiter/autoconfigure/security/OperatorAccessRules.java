package dev.ratelimiter.autoconfigure.security;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.autoconfigure.rules.RulesApiMount;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;

/**
 * Which operator request needs which role, one table for both flavours' chains (each only matches paths its own way:
 * path patterns on WebFlux, the servlet's readings on MVC). Reads ({@code GET}, {@code HEAD}) of the public endpoints
 * are anyone's; reads of the viewer endpoints, of the rules API and of the discovery page itself are the viewer's and
 * the admin's; everything else - every write, and every read of what can hold a secret (env, heapdump, the routes) -
 * is the admin's.
 *
 * @param publicPaths the public endpoints' paths (each with what lies below it)
 * @param viewerPaths the viewer endpoints' paths and the rules API's (each with what lies below it)
 * @param discovery the discovery page at the base path, the viewer's on its own (not what lies below it), or null
 * when the endpoints are at the root
 * @param operatorPaths every exposed endpoint's path, the discovery page and the rules API: what a chain on the
 * application's own port guards
 */
public record OperatorAccessRules(List<String> publicPaths, List<String> viewerPaths, @Nullable String discovery,
        List<String> operatorPaths) {

    /**
     * @param rulesApi the rules API's collection path, or null when it is not served
     */
    public static OperatorAccessRules of(PathMappedEndpoints endpoints, List<String> publicEndpoints,
            List<String> viewerEndpoints, @Nullable String rulesApi) {
        List<String> viewer = new ArrayList<>(paths(endpoints, viewerEndpoints));
        List<String> all = new ArrayList<>(endpoints.getAllPaths());
        String base = endpoints.getBasePath();
        String discovery = !base.isEmpty() && !base.equals("/") ? base : null;
        if (discovery != null) {
            all.add(discovery);
        }
        if (rulesApi != null) {
            all.add(rulesApi);
            viewer.add(rulesApi);
            // the usage API, served beside the rules API: reads only, the viewer's like the rules
            all.add(RulesApiMount.usagePath(rulesApi));
            viewer.add(RulesApiMount.usagePath(rulesApi));
        }
        return new OperatorAccessRules(paths(endpoints, publicEndpoints), List.copyOf(viewer), discovery,
                List.copyOf(all));
    }

    /** Whether the method only reads ({@code GET}, {@code HEAD}). */
    public static boolean read(String method) {
        return method.equals("GET") || method.equals("HEAD");
    }

    /** Path patterns of these paths and of what lies below each ({@code /x}, {@code /x/**}). */
    public static String[] patterns(List<String> paths) {
        List<String> patterns = new ArrayList<>();
        for (String path : paths) {
            patterns.add(path);
            patterns.add(path + "/**");
        }
        return patterns.toArray(String[]::new);
    }

    /** The paths of these endpoints (only the exposed ones have a path). */
    private static List<String> paths(PathMappedEndpoints endpoints, List<String> ids) {
        List<String> paths = new ArrayList<>();
        for (String id : ids) {
            String path = endpoints.getPath(EndpointId.of(id.trim()));
            if (path != null) {
                paths.add(path);
            }
        }
        return List.copyOf(paths);
    }
}
