package dev.ratelimiter.autoconfigure.security;

import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.InvalidLimitException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client-id hashes {@code ratelimit.client-id} asks for: keyed by the secret, and by the previous secret while it
 * is rotated. Without a secret, the unkeyed hash of every release before it, so that upgrading changes no bucket key;
 * that is said once at start-up, with what to do about it.
 */
public final class ClientIdSecrets {

    private static final Logger logger = LoggerFactory.getLogger(ClientIdSecrets.class);

    private ClientIdSecrets() {
    }

    public static ClientIdKeyring keyring(RateLimitProperties.ClientId settings) {
        if (settings.getSecret() == null) {
            if (settings.getPreviousSecret() != null) {
                throw new InvalidLimitException("ratelimit.client-id.secret", "ratelimit.client-id.previous-secret is "
                        + "set but ratelimit.client-id.secret is not: a rotation needs the new secret as well. Set "
                        + "ratelimit.client-id.secret, or remove the previous one.");
            }
            logger.warn("ratelimit.client-id.secret is not set: client ids (bucket keys in Redis, decision events, the "
                    + "actuator view, the hashed API keys of customer overrides) are a plain SHA-256 of the API key, "
                    + "which anyone who can read them reverses for a guessable key by hashing candidates. Set "
                    + "ratelimit.client-id.secret (environment variable RATELIMIT_CLIENTID_SECRET) to a random string "
                    + "of at least {} bytes, e.g. the output of 'openssl rand -base64 32'; every bucket then starts "
                    + "afresh once (see 'Rotating the client-id secret' in the operator notes).",
                    ClientIds.MIN_SECRET_BYTES);
            return ClientIdKeyring.unkeyed();
        }
        ClientIds current = ClientIds.keyed("ratelimit.client-id.secret", settings.getSecret());
        ClientIds previous = settings.getPreviousSecret() == null ? null
                : ClientIds.keyed("ratelimit.client-id.previous-secret", settings.getPreviousSecret());
        return ClientIdKeyring.of(current, previous);
    }
}
