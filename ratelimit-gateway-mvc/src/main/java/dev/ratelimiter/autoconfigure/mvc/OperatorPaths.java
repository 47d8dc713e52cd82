package dev.ratelimiter.autoconfigure.mvc;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;

/**
 * Which operator paths a request is on, for {@link OperatorSecurityServletFilter}. The endpoints' and the rules API's
 * paths are the DispatcherServlet's own (below {@code spring.mvc.servlet.path}, whatever it is), so a request is
 * placed by the path its servlet serves it at - the path info under a path-mapped servlet, the servlet path under the
 * default one, as the container decoded and normalised them - and by the whole path below the context path as well.
 * The servlet mapping is what the container chose for this very request, so it cannot drift from the dispatcher's
 * registration as a configured prefix could. A request on an operator path in either reading needs what the
 * stricter reading asks for: nothing is public unless every operator reading of it is.
 */
final class OperatorPaths {

    private final boolean wholePort;

    private final List<String> guarded;

    private final List<String> publicPaths;

    private final List<String> viewerPaths;

    /** The discovery page, the viewer's on its own: not what lies below it (env, heapdump are the admin's). */
    private final @Nullable String discovery;

    /**
     * @param wholePort whether the filter guards a port that serves only the endpoints (every request) or the
     * application's (only the endpoints', the discovery page's and the rules API's paths)
     * @param rulesApi the rules API's collection path, or null when it is not served
     */
    OperatorPaths(PathMappedEndpoints endpoints, List<String> publicEndpoints, List<String> viewerEndpoints,
            boolean wholePort, @Nullable String rulesApi) {
        this.wholePort = wholePort;
        this.publicPaths = paths(endpoints, publicEndpoints);
        List<String> viewer = new ArrayList<>(paths(endpoints, viewerEndpoints));
        List<String> all = new ArrayList<>(endpoints.getAllPaths());
        String base = endpoints.getBasePath();
        this.discovery = !base.isEmpty() && !base.equals("/") ? base : null;
        if (discovery != null) {
            all.add(discovery);
        }
        if (rulesApi != null) {
            all.add(rulesApi);
            viewer.add(rulesApi);
        }
        this.viewerPaths = List.copyOf(viewer);
        this.guarded = List.copyOf(all);
    }

    /** Whether the filter must see the request at all. */
    boolean guards(HttpServletRequest request) {
        return wholePort || readings(request).stream().anyMatch(path -> under(path, guarded));
    }

    /** A public endpoint's path in every reading that is an operator path. */
    boolean isPublic(HttpServletRequest request) {
        return operatorReadings(request).allMatch(path -> under(path, publicPaths));
    }

    /** A path the viewer may read in every reading that is an operator path. */
    boolean isForViewer(HttpServletRequest request) {
        return operatorReadings(request).allMatch(path -> under(path, viewerPaths)
                || (discovery != null && (path.equals(discovery) || path.equals(discovery + "/"))));
    }

    /** On a port of their own every reading counts; never none, so an empty match cannot make a path public. */
    private Stream<String> operatorReadings(HttpServletRequest request) {
        Predicate<String> operator = wholePort ? path -> true : path -> under(path, guarded);
        List<String> readings = readings(request).stream().filter(operator).toList();
        return readings.isEmpty() ? Stream.of("") : readings.stream();
    }

    /**
     * The path within the servlet that serves the request (what the DispatcherServlet matches its handlers on), then
     * the whole path below the context path when that differs.
     */
    private static List<String> readings(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String info = request.getPathInfo();
        if (info == null || servletPath.isEmpty()) {
            return List.of(servletPath + (info != null ? info : ""));
        }
        return List.of(info, servletPath + info);
    }

    private static boolean under(String path, List<String> prefixes) {
        for (String prefix : prefixes) {
            if (path.equals(prefix) || path.equals(prefix + "/") || path.startsWith(prefix + "/")) {
                return true;
            }
        }
        return false;
    }

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
