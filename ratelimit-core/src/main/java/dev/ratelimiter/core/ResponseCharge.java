package dev.ratelimiter.core;

import java.util.List;

/**
 * A rule charged by what the upstream reports it used (an LLM API's tokens): the request is admitted if the bucket
 * holds {@code minimum}, which it spends up front; when the response completes, the reported amount less the minimum
 * is charged to the same bucket, down to a debt of at most one capacity (the floor {@code charge.lua} holds for every
 * after-the-fact charge). The client is then refused before its next request until the bucket has refilled.
 *
 * @param header the response header carrying the amount (e.g. {@code X-Usage-Tokens}), or null
 * @param jsonField a dotted path of object members in the JSON body (e.g. {@code usage.total_tokens}), or null; read
 * as the body passes, also from server-sent events ({@code data: {...}} lines, the last value wins)
 * @param minimum tokens a request must find in the bucket, spent up front
 */
public record ResponseCharge(String header, String jsonField, int minimum) {

    /** The path's members, {@code usage.total_tokens} → [usage, total_tokens]. */
    public List<String> path() {
        return jsonField == null ? List.of() : List.of(jsonField.split("\\.", -1));
    }

    void validate(String source, Limit limit, StoreMode storeMode) {
        String setting = "charge-from-response";
        if ((header == null || header.isBlank()) == (jsonField == null || jsonField.isBlank())) {
            throw new InvalidLimitException(setting, source + " charge-from-response needs exactly one of header (a "
                    + "response header) or json-field (a dotted path such as usage.total_tokens).");
        }
        if (jsonField != null && path().stream().anyMatch(String::isEmpty)) {
            throw new InvalidLimitException(setting + ".json-field", source + " charge-from-response.json-field '"
                    + jsonField + "' has an empty member name; write it as usage.total_tokens.");
        }
        if (path().size() > 16) {
            throw new InvalidLimitException(setting + ".json-field", source + " charge-from-response.json-field '"
                    + jsonField + "' is " + path().size() + " members deep; at most 16 are read.");
        }
        if (minimum < 1 || minimum > limit.quota()) {
            throw new InvalidLimitException(setting + ".minimum", source + " charge-from-response.minimum must be "
                    + "between 1 and its quota " + limit.quota() + ", but was " + minimum + ".");
        }
        if (storeMode == StoreMode.LOCAL) {
            throw new InvalidLimitException("store-mode", source + " is charged from the response, which charges the "
                    + "shared bucket after the fact; use store-mode exact.");
        }
    }
}
