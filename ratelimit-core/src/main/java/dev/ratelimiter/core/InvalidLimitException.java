package dev.ratelimiter.core;

/**
 * A limit, tier or key setting that cannot work. The message is a sentence meant for the person who wrote
 * the configuration: it names the setting, the value and what is allowed.
 */
public class InvalidLimitException extends IllegalArgumentException {

    private final String setting;

    public InvalidLimitException(String setting, String message) {
        super(message);
        this.setting = setting;
    }

    /** The setting at fault, e.g. {@code ratelimit.tiers.free.limits.default.capacity}. */
    public String setting() {
        return setting;
    }
}
