package dev.ratelimiter.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Micrometer observations of the limiter (traces, and timers where a meter handler is registered): a
 * {@code ratelimit.decision} observation per decision and a {@code ratelimit.store} one per store call.
 */
@ConfigurationProperties("ratelimit.observations")
public class ObservationProperties {

    /**
     * Whether decisions and store calls are observed when the application has an ObservationRegistry (Spring Boot's
     * actuator makes one). Without a registry, or with one that records nothing, nothing is observed either way.
     */
    private boolean enabled = true;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }
}
