package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Values found by a request's API key through its client ids: customer overrides, tier lists. Each entry is filed
 * under the hashed key it was written as, and a request's key is hashed only under the schemes some entry is filed
 * under: in the common case the current one alone, one cached hash per request.
 */
final class ClientIdIndex<T> {

    private final ClientIds[] schemes;
    private final List<Map<String, List<T>>> byId;

    private ClientIdIndex(Map<ClientIds, Map<String, List<T>>> filed) {
        this.schemes = filed.keySet().toArray(ClientIds[]::new);
        this.byId = new ArrayList<>();
        filed.values().forEach(ids -> {
            Map<String, List<T>> copy = new HashMap<>();
            ids.forEach((id, values) -> copy.put(id, List.copyOf(values)));
            byId.add(Map.copyOf(copy));
        });
    }

    /** Every entry filed under one of the ids of this API key, in the order of the keyring's schemes. */
    List<T> get(String apiKey) {
        if (schemes.length == 0) {
            return List.of(); // nothing filed: no hash to compute
        }
        if (schemes.length == 1) {
            return byId.get(0).getOrDefault(schemes[0].of(apiKey), List.of());
        }
        List<T> all = new ArrayList<>();
        for (int i = 0; i < schemes.length; i++) {
            all.addAll(byId.get(i).getOrDefault(schemes[i].of(apiKey), List.of()));
        }
        return all;
    }

    /**
     * Every entry filed under this client id of {@code scheme}: for a caller that has the id and not the key (the usage
     * API's {@code client=}), which can only be found under the scheme that made it.
     */
    List<T> getById(ClientIds scheme, String clientId) {
        for (int i = 0; i < schemes.length; i++) {
            if (schemes[i].scheme().equals(scheme.scheme())) {
                return byId.get(i).getOrDefault(clientId, List.of());
            }
        }
        return List.of();
    }

    /** Whether nothing is filed at all. */
    boolean isEmpty() {
        return schemes.length == 0;
    }

    static <T> Builder<T> builder(ClientIdKeyring keyring) {
        return new Builder<>(keyring);
    }

    static final class Builder<T> {

        private final ClientIdKeyring keyring;
        private final Map<ClientIds, Map<String, List<T>>> filed = new HashMap<>();

        private Builder(ClientIdKeyring keyring) {
            this.keyring = keyring;
        }

        /** Files a value under a hashed key; false when its scheme is one the keyring lacks (it can match nobody). */
        boolean add(HashedApiKey key, T value) {
            ClientIds scheme = keyring.find(key.scheme());
            if (scheme == null) {
                return false;
            }
            filed.computeIfAbsent(scheme, s -> new HashMap<>()).computeIfAbsent(key.clientId(), id -> new ArrayList<>())
                    .add(value);
            return true;
        }

        ClientIdIndex<T> build() {
            Map<ClientIds, Map<String, List<T>>> inOrder = new LinkedHashMap<>();
            for (ClientIds scheme : keyring.known()) {
                if (filed.containsKey(scheme)) {
                    inOrder.put(scheme, filed.get(scheme));
                }
            }
            return new ClientIdIndex<>(inOrder);
        }
    }
}
