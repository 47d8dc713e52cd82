package dev.ratelimiter.autoconfigure.mvc;

import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;

import dev.ratelimiter.autoconfigure.security.OperatorAccessRules;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;

/**
 * Which operator paths a request is on, for {@link OperatorSecurityServletFilter}: the shared table of who may do
 * what ({@link OperatorAccessRules}) read the servlet's way. The endpoints' and the rules API's
 * paths are the DispatcherServlet's own (below {@code spring.mvc.servlet.path}, whatever it is), so a request is
 * placed by the path its servlet serves it at - the path info under a path-mapped servlet, the servlet path under the
 * default one, as the container decoded and normalised them - and by the whole path below the context path as well.
 * The servlet mapping is what the container chose for this very request, so it cannot drift from the dispatcher's
 * registration as a configured prefix could. A request on an operator path in either reading needs what the
 * stricter reading asks for: nothing is public unless every operator reading of it is.
 */
final class OperatorPaths {

    private final boolean wholePort;

    private final OperatorAccessRules rules;

    /**
     * @param wholePort whether the filter guards a port that serves only the endpoints (every request) or the
     * application's (only the endpoints', the discovery page's and the rules API's paths)
     * @param rulesApi the rules API's collection path, or null when it is not served
     */
    OperatorPaths(PathMappedEndpoints endpoints, List<String> publicEndpoints, List<String> viewerEndpoints,
            boolean wholePort, @Nullable String rulesApi) {
        this.wholePort = wholePort;
        this.rules = OperatorAccessRules.of(endpoints, publicEndpoints, viewerEndpoints, rulesApi);
    }

    /** Whether the filter must see the request at all. */
    boolean guards(HttpServletRequest request) {
        return wholePort || readings(request).stream().anyMatch(path -> under(path, rules.operatorPaths()));
    }

    /** A public endpoint's path in every reading that is an operator path. */
    boolean isPublic(HttpServletRequest request) {
        return operatorReadings(request).allMatch(path -> under(path, rules.publicPaths()));
    }

    /** A path the viewer may read in every reading that is an operator path. */
    boolean isForViewer(HttpServletRequest request) {
        String discovery = rules.discovery();
        return operatorReadings(request).allMatch(path -> under(path, rules.viewerPaths())
                || (discovery != null && (path.equals(discovery) || path.equals(discovery + "/"))));
    }

    /** On a port of their own every reading counts; never none, so an empty match cannot make a path public. */
    private Stream<String> operatorReadings(HttpServletRequest request) {
        Predicate<String> operator = wholePort ? path -> true : path -> under(path, rules.operatorPaths());
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

}
