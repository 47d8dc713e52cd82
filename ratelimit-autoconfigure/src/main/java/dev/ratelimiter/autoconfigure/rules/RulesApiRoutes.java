package dev.ratelimiter.autoconfigure.rules;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/** The rules API's routes below its mount ({@link RulesApiMount}); every other request on its paths is its own too. */
public final class RulesApiRoutes {

    /** The OpenAPI document, written for the default path {@value #DOCUMENTED_PATH}. */
    public static final String OPENAPI = "META-INF/ratelimit/rules-api.openapi.yaml";
    static final String DOCUMENTED_PATH = "/v1/rules";
    /** Below the collection, where no rule can be: rule ids start with a letter or a digit. */
    static final String OPENAPI_PATH = "/_openapi.yaml";

    private RulesApiRoutes() {
    }

    public static RouterFunction<ServerResponse> of(RulesApiMount mount, RulesApiHandler handler) {
        String path = mount.path();
        return RouterFunctions.route()
                // HEAD answers as GET does (status, ETag, type, length), without the body
                .GET(path, handler::list).HEAD(path, handler::list)
                .GET(path + OPENAPI_PATH, handler::openApi).HEAD(path + OPENAPI_PATH, handler::openApi)
                .GET(path + "/{ruleId}", handler::get).HEAD(path + "/{ruleId}", handler::get)
                .PUT(path + "/{ruleId}", handler::put)
                .DELETE(path + "/{ruleId}", handler::delete)
                .route(RequestPredicates.path(path).or(RequestPredicates.path(path + "/**")), handler::elsewhere)
                .build();
    }

    /** The OpenAPI document with its paths where the API is mounted. */
    static String openApi(RulesApiMount mount, ClassLoader loader) {
        try (InputStream in = loader.getResourceAsStream(OPENAPI)) {
            if (in == null) {
                throw new IllegalStateException(OPENAPI + " is missing from the starter's jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .replace("  " + DOCUMENTED_PATH, "  " + mount.path())
                    .replace("  " + RulesApiMount.usagePath(DOCUMENTED_PATH) + ":", "  " + mount.usagePath() + ":");
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
