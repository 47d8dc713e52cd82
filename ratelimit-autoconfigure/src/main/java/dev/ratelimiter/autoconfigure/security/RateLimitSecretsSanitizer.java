package dev.ratelimiter.autoconfigure.security;

import java.util.Locale;

import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;

/**
 * Masks the operators' passwords, the client-id secret and the listed API keys wherever the actuator shows
 * configuration (env, configprops), whatever {@code show-values} says: the viewer must never read the admin's password.
 */
public final class RateLimitSecretsSanitizer implements SanitizingFunction {

    @Override
    public SanitizableData apply(SanitizableData data) {
        return isRateLimitSecret(data.getKey()) ? data.withSanitizedValue() : data;
    }

    public static boolean isRateLimitSecret(String key) {
        String name = key.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
        return name.contains("ratelimitmanagementsecurity") && name.endsWith("password")
                || name.contains("ratelimitclientid") && name.contains("secret")
                // the API keys listed in tiers and overrides are credentials too
                || name.startsWith("ratelimit") && name.contains("apikeys") && !name.contains("apikeyunknown");
    }
}
