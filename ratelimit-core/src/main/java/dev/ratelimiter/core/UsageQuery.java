package dev.ratelimiter.core;

import java.util.regex.Pattern;

/**
 * Whose usage to read, and optionally on which requests. The identity is what a request would carry: an API key as
 * sent (hashed like a request's before anything is looked up; never kept or shown) or its client id, a user, a
 * tenant, a client address; at least one of them. The rest narrows the rules the way a request's route, path, route
 * class and tier select them: a rule whose match or key depends on one of those that is not given is skipped, and
 * said to be.
 *
 * @param apiKey the API key as a request sends it, or null
 * @param clientId the API key's client id ({@code [A-Za-z0-9_-]{22}}, as the events and the actuator show it), or null
 * @param user the end user, or null
 * @param tenant the tenant, or null
 * @param clientIp the client's address, or null
 * @param route a gateway route id, or null
 * @param path a request path, or null
 * @param routeClass a route class, or null
 * @param tier the tier to read as, or null for the tier the API key is in (the default tier without one)
 * @param ruleId only this rule, or null for every rule that applies
 */
public record UsageQuery(String apiKey, String clientId, String user, String tenant, String clientIp, String route,
        String path, String routeClass, String tier, String ruleId) {

    private static final Pattern CLIENT_ID = Pattern.compile("[A-Za-z0-9_-]{22}");

    public UsageQuery {
        if (apiKey == null && clientId == null && user == null && tenant == null && clientIp == null) {
            throw new UsageQueryException(UsageQueryException.Kind.INVALID, "identity", "Say whose usage to read: "
                    + "apiKey, client (a client id), user, tenant or ip.");
        }
        if (apiKey != null && clientId != null) {
            throw new UsageQueryException(UsageQueryException.Kind.INVALID, "client", "Give apiKey or client, not "
                    + "both: they name the same thing.");
        }
        if (clientId != null && !CLIENT_ID.matcher(clientId).matches()) {
            throw new UsageQueryException(UsageQueryException.Kind.INVALID, "client", "client must be a client id: "
                    + "22 characters of A-Z, a-z, 0-9, '_' and '-', as the decision events show it.");
        }
        if (path != null && !path.startsWith("/")) {
            throw new UsageQueryException(UsageQueryException.Kind.INVALID, "path", "path must start with '/'.");
        }
    }

    /** Whether the query names the client by its API key, in either form. */
    boolean hasClient() {
        return apiKey != null || clientId != null;
    }
}
