package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.List;

/**
 * The client-id hashes an instance can compute: the current one, which names every bucket and event, and the ones a
 * stored {@link HashedApiKey} may have been written under — the previous secret while it is being rotated, and the
 * unkeyed hash, which needs no secret and so stays computable after one is set. Customer overrides hashed under
 * either keep matching; only the current one is ever written.
 */
public final class ClientIdKeyring {

    private final ClientIds current;
    private final List<ClientIds> known;

    private ClientIdKeyring(ClientIds current, ClientIds previous) {
        this.current = current;
        List<ClientIds> known = new ArrayList<>(List.of(current));
        if (previous != null && !previous.scheme().equals(current.scheme())) {
            known.add(previous);
        }
        if (current.isKeyed()) {
            known.add(ClientIds.unkeyed());
        }
        this.known = List.copyOf(known);
    }

    /** No secret: ids are plain SHA-256, as before secrets existed. */
    public static ClientIdKeyring unkeyed() {
        return new ClientIdKeyring(ClientIds.unkeyed(), null);
    }

    /**
     * @param current the hash every id is made with
     * @param previous the hash of the secret being rotated away from, or null
     */
    public static ClientIdKeyring of(ClientIds current, ClientIds previous) {
        return new ClientIdKeyring(current, previous);
    }

    public ClientIds current() {
        return current;
    }

    /** The current hash first, then the others it recognises, in the order a request's key is tried under them. */
    public List<ClientIds> known() {
        return known;
    }

    /** The known hash of that scheme, or null: a hashed key written under a secret this instance does not have. */
    public ClientIds find(String scheme) {
        for (ClientIds ids : known) {
            if (ids.scheme().equals(scheme)) {
                return ids;
            }
        }
        return null;
    }

    /**
     * A match value as it may be stored and shown: a raw API key hashed under the current secret; a hashed key as it
     * is (it names the scheme it was hashed under); null for a value that {@linkplain HashedApiKey#looksHashed looks
     * hashed} but is not in the form.
     */
    public HashedApiKey hashed(String value) {
        return HashedApiKey.looksHashed(value) ? HashedApiKey.parse(value) : current.hashed(value);
    }
}
