package dev.ratelimiter.autoconfigure.usage;

import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.RequestPaths;
import dev.ratelimiter.core.UsageQuery;
import dev.ratelimiter.core.UsageQueryException;
import org.jspecify.annotations.Nullable;

/**
 * A usage query from the query string of {@code GET /v1/usage}: each parameter at most once, none unknown (a
 * misspelt {@code apikey} would otherwise read as no identity, or worse as another one), values of printable
 * characters and bounded length, and an API key of the form the request path accepts ({@link ApiKeyFormat}), so that a
 * key the gateway would refuse is refused here too, rather than read as a client that cannot exist.
 */
public final class UsageQueries {

    /** The parameters the usage API takes. */
    public static final Set<String> PARAMETERS = Set.of("apiKey", "client", "user", "tenant", "ip", "route", "path",
            "routeClass", "tier", "rule");

    /** The longest value of any parameter but the API key (which has its own bound). */
    static final int MAX_VALUE_LENGTH = 1_024;

    private final ApiKeyFormat apiKeyFormat;

    public UsageQueries(ApiKeyFormat apiKeyFormat) {
        this.apiKeyFormat = apiKeyFormat;
    }

    /** The query the parameters ask; {@link UsageQueryException} (invalid) when they cannot be read as one. */
    public UsageQuery parse(Map<String, List<String>> parameters) {
        for (Map.Entry<String, List<String>> parameter : parameters.entrySet()) {
            if (!PARAMETERS.contains(parameter.getKey())) {
                // named back only when it is short and printable: the answer never carries what it cannot show
                String name = parameter.getKey();
                boolean showable = !name.isEmpty() && name.length() <= 64 && printable(name);
                throw invalid(showable ? name : "?", "Unknown parameter '" + (showable ? name : "(unshowable)")
                        + "'; the usage API takes " + String.join(", ", PARAMETERS.stream().sorted().toList()) + ".");
            }
            if (parameter.getValue().size() > 1) {
                throw invalid(parameter.getKey(), "Give " + parameter.getKey() + " once, not "
                        + parameter.getValue().size() + " times.");
            }
        }
        String apiKey = value(parameters, "apiKey");
        if (apiKey != null) {
            String problem = apiKeyFormat.problem(apiKey);
            if (problem != null) {
                // the format's message names the rule broken, never the key itself
                throw invalid("apiKey", "apiKey " + problem + ": the gateway refuses such a key, so no bucket "
                        + "can hold its usage.");
            }
        }
        String path = value(parameters, "path");
        if (path != null) {
            if (!path.startsWith("/")) {
                throw invalid("path", "path must start with '/', as a request's does.");
            }
            path = RequestPaths.normalise(path); // as the request path matches rules
        }
        return new UsageQuery(apiKey, value(parameters, "client"), value(parameters, "user"),
                value(parameters, "tenant"), value(parameters, "ip"), value(parameters, "route"), path,
                value(parameters, "routeClass"), value(parameters, "tier"), value(parameters, "rule"));
    }

    private @Nullable String value(Map<String, List<String>> parameters, String name) {
        List<String> values = parameters.get(name);
        if (values == null || values.isEmpty() || values.get(0) == null) {
            return null;
        }
        String value = values.get(0);
        if (value.isEmpty()) {
            throw invalid(name, name + " is empty; leave it out, or give a value.");
        }
        if (!name.equals("apiKey") && value.length() > MAX_VALUE_LENGTH) {
            throw invalid(name, name + " is " + value.length() + " characters long; at most " + MAX_VALUE_LENGTH
                    + " are read.");
        }
        if (!name.equals("apiKey") && !printable(value)) {
            throw invalid(name, name + " holds control characters; no request could carry it.");
        }
        return value;
    }

    private static boolean printable(String value) {
        return value.chars().noneMatch(c -> c < 0x20 || c == 0x7f);
    }

    private static UsageQueryException invalid(String field, String message) {
        return new UsageQueryException(UsageQueryException.Kind.INVALID, field, message);
    }
}
