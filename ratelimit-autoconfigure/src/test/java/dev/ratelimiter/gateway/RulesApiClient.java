package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.yaml.snakeyaml.Yaml;

/**
 * A client of the rules API for the tests, as admin or viewer, that records every answer as {@code "<path template>
 * <method> <status>"} so that a test can check each one is in the OpenAPI document.
 */
final class RulesApiClient {

    static final ParameterizedTypeReference<Map<String, Object>> MAP = new ParameterizedTypeReference<>() { };

    /** Every answer any client saw, across test classes. */
    static final Set<String> seen = ConcurrentHashMap.newKeySet();

    private final String base;
    private final String path;

    RulesApiClient(int port, String path) {
        this.base = "http://127.0.0.1:" + port;
        this.path = path;
    }

    /** A client as {@code user}, or anonymous when null. */
    WebTestClient as(String user, String password) {
        WebTestClient.Builder builder = WebTestClient.bindToServer().baseUrl(base).responseTimeout(Duration.ofSeconds(20))
                .filter(recording());
        if (user != null) {
            builder.defaultHeaders(headers -> headers.setBasicAuth(user, password));
        }
        return builder.build();
    }

    String path() {
        return path;
    }

    String rule(String id) {
        return path + "/" + id;
    }

    private ExchangeFilterFunction recording() {
        return (request, next) -> next.exchange(request).doOnNext(response -> {
            String requested = request.url().getRawPath();
            String template = requested.equals(path) ? "/v1/rules"
                    : requested.equals(path + "/_openapi.yaml") ? "/v1/rules/_openapi.yaml"
                    : requested.startsWith(path + "/") && requested.indexOf('/', path.length() + 1) < 0
                            ? "/v1/rules/{ruleId}"
                    : requested.startsWith(path + "/") && requested.endsWith("/what-if")
                            && requested.indexOf('/', path.length() + 1) == requested.length() - "/what-if".length()
                            ? "/v1/rules/{ruleId}/what-if" : null;
            if (template != null) {
                seen.add(template + " " + request.method().name().toLowerCase() + " " + response.statusCode().value());
            }
        });
    }

    /**
     * The answers seen so far that the OpenAPI document (YAML) does not list: a path template, method or status it
     * lacks. Should be none.
     */
    @SuppressWarnings("unchecked")
    static Set<String> undocumented(String openApi) {
        Map<String, Object> paths = (Map<String, Object>) new Yaml().<Map<String, Object>>load(openApi).get("paths");
        Set<String> missing = new TreeSet<>();
        for (String answer : seen) {
            String[] parts = answer.split(" ");
            Map<String, Object> item = (Map<String, Object>) paths.get(parts[0]);
            Map<String, Object> operation = item == null ? null : (Map<String, Object>) item.get(parts[1]);
            Map<Object, Object> responses = operation == null ? null
                    : (Map<Object, Object>) operation.get("responses");
            if (responses == null || !responses.containsKey(parts[2])) {
                missing.add(answer);
            }
        }
        return missing;
    }

    /** A PUT of {@code document} (a JSON text) with the given precondition header, answered as it comes. */
    EntityExchangeResult<String> put(WebTestClient client, String id, String document, String header, String value) {
        WebTestClient.RequestBodySpec spec = client.put().uri(rule(id)).contentType(MediaType.APPLICATION_JSON);
        if (header != null) {
            spec.header(header, value);
        }
        return spec.bodyValue(document).exchange().expectBody(String.class).returnResult();
    }

    /** The ETag of a read of the rule (or of the collection when id is null), without its quotes. */
    static long version(EntityExchangeResult<?> result) {
        String tag = result.getResponseHeaders().getETag();
        return Long.parseLong(tag.substring(1, tag.length() - 1));
    }

    static String ifMatch(long version) {
        return "\"" + version + "\"";
    }

    static final String IF_MATCH = HttpHeaders.IF_MATCH;
    static final String IF_NONE_MATCH = HttpHeaders.IF_NONE_MATCH;
}
