package dev.ratelimiter.autoconfigure.rules;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.HashedApiKey;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.RuntimeRules;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/**
 * The API keys of runtime rules as the rule store holds them: hashed on the way in, so that the store never holds a
 * key as sent, and checked on the way out, for keys this instance cannot match or that should be posted again.
 */
final class StoredApiKeys {

    private static final ConfigurationPropertyName API_KEYS = ConfigurationPropertyName.of("match.api-keys");

    private StoredApiKeys() {
    }

    /**
     * The spec with every {@code match.api-keys} value as a {@link HashedApiKey}: a key as sent hashed under the
     * current secret, a hashed one kept (a GET of the rule can be posted back as it is). Refuses a value that looks
     * hashed but is not, or is hashed under a secret this instance does not have: it would match nobody.
     */
    static Map<String, String> hashed(String id, Map<String, String> spec, ClientIdKeyring keyring) {
        List<String> apiKeys = new ArrayList<>(RuleFactory.bind(id, spec).getMatch().getApiKeys());
        if (apiKeys.isEmpty()) {
            return spec;
        }
        String setting = "ratelimit.rules." + id + ".match.api-keys";
        List<String> hashed = new ArrayList<>();
        for (int i = 0; i < apiKeys.size(); i++) {
            HashedApiKey key = keyring.hashed(apiKeys.get(i));
            if (key == null) {
                throw new InvalidLimitException(setting, setting + "[" + i + "] starts like a hashed API key but is "
                        + "not one; expected " + HashedApiKey.EXPECTED_FORM + ".");
            }
            if (keyring.find(key.scheme()) == null) {
                throw new InvalidLimitException(setting, setting + "[" + i + "] is hashed under a secret this "
                        + "instance does not have (" + key.scheme() + ", the current one is "
                        + keyring.current().scheme() + "), so it would match nobody; send the key as sent in requests.");
            }
            hashed.add(key.toString());
        }
        Map<String, String> stored = new LinkedHashMap<>();
        spec.forEach((name, value) -> {
            if (!isApiKeys(name)) {
                stored.put(name, value);
            }
        });
        // A hashed key has no comma, so one comma-separated value holds them all.
        stored.put("match.api-keys", String.join(",", hashed));
        return stored;
    }

    /** Whether a spec setting is (an element of) match.api-keys, in any of the forms the binder accepts. */
    private static boolean isApiKeys(String name) {
        ConfigurationPropertyName adapted = ConfigurationPropertyName.adapt(name, '.');
        return API_KEYS.equals(adapted) || API_KEYS.isParentOf(adapted);
    }

    /**
     * What an operator should know of the runtime rules' API keys, by rule id: keys that match no request here, keys
     * matched only through the previous secret, and keys stored as sent or hashed without a secret (written before
     * keys were hashed, or before a secret was set). Empty when every key is hashed under the current secret.
     */
    static Map<String, String> notes(RuntimeRules runtime, ClientIdKeyring keyring) {
        Map<String, String> notes = new TreeMap<>();
        runtime.specs().forEach((id, spec) -> {
            List<String> apiKeys;
            try {
                apiKeys = new ArrayList<>(RuleFactory.bind(id, spec).getMatch().getApiKeys());
            }
            catch (InvalidLimitException ex) {
                return; // not in force; the rule store's problem says so
            }
            String note = note(apiKeys, keyring);
            if (note != null) {
                notes.put(id, note);
            }
        });
        return notes;
    }

    private static String note(List<String> apiKeys, ClientIdKeyring keyring) {
        int asSent = 0;
        int unkeyed = 0;
        int previous = 0;
        Map<String, Integer> unknown = new TreeMap<>();
        ClientIds current = keyring.current();
        for (String apiKey : apiKeys) {
            HashedApiKey key = keyring.hashed(apiKey);
            if (!HashedApiKey.looksHashed(apiKey)) {
                asSent++;
            }
            else if (key == null || key.scheme().equals(current.scheme())) {
                continue; // a malformed key keeps the rule out of force, and the rule store reports it
            }
            else if (keyring.find(key.scheme()) == null) {
                unknown.merge(key.scheme(), 1, Integer::sum);
            }
            else if (key.scheme().equals(ClientIds.UNKEYED_SCHEME)) {
                unkeyed++;
            }
            else {
                previous++;
            }
        }
        List<String> found = new ArrayList<>();
        if (!unknown.isEmpty()) {
            found.add(unknown.values().stream().mapToInt(Integer::intValue).sum() + " API key(s) hashed under a secret "
                    + "this instance does not have (" + String.join(", ", unknown.keySet()) + "), matching no request");
        }
        if (previous > 0) {
            found.add(previous + " API key(s) matched only through ratelimit.client-id.previous-secret");
        }
        if (unkeyed > 0) {
            found.add(unkeyed + " API key(s) hashed without a secret, which a guessable key can be recovered from");
        }
        if (asSent > 0) {
            found.add(asSent + " API key(s) stored as sent, written before keys were hashed");
        }
        return found.isEmpty() ? null : String.join("; ", found) + ". Post the rule again with its API keys as sent "
                + "in requests, to store them hashed under the current secret.";
    }
}
