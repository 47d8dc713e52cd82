package dev.ratelimiter.autoconfigure.security;


import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.IpLiteral;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.core.env.Environment;

/**
 * Where the actuator endpoints are served, and so whether they must be authenticated: by default they must be
 * wherever anything but this host can reach them.
 *
 * @param separatePort whether the endpoints have a management port of their own
 * @param address the address they listen on, or null for every address of the host
 * @param secured whether authentication is required
 */
public record OperatorEndpointExposure(boolean separatePort, @Nullable String address, boolean secured) {

    public static final String ENABLED = "ratelimit.management.security.enabled";

    public static OperatorEndpointExposure of(Environment environment) {
        ManagementPortType type = ManagementPortType.get(environment);
        boolean separate = type == ManagementPortType.DIFFERENT;
        String address = environment.getProperty(separate ? "management.server.address" : "server.address");
        Boolean enabled = environment.getProperty(ENABLED, Boolean.class);
        boolean secured = type != ManagementPortType.DISABLED
                && (enabled != null ? enabled : !isLoopback(address));
        return new OperatorEndpointExposure(separate, address, secured);
    }

    /**
     * The exposure, checked again where the loopback-only filter is made, since its condition may have been decided
     * elsewhere: an AOT-processed application ({@code -Dspring.aot.enabled=true}) keeps the conditions of its build,
     * so a management address changed since would serve the endpoints beyond loopback with nothing but the
     * {@code Host} check, a header any client writes. Without AOT the two always agree.
     *
     * @throws InvalidLimitException when the endpoints are not unauthenticated on loopback now
     */
    public static OperatorEndpointExposure loopbackOnly(Environment environment) {
        OperatorEndpointExposure exposure = of(environment);
        if (!exposure.unauthenticatedOnLoopback()) {
            throw new InvalidLimitException(exposure.separatePort() ? "management.server.address" : "server.address",
                    "This application was AOT-processed with the actuator endpoints unauthenticated on loopback, but "
                    + "they are now on " + exposure.describe() + (exposure.secured() ? ", which needs the operator "
                    + "accounts" : "") + ": whether they are authenticated was decided when it was built. Process it "
                    + "again with the settings it runs with, or start it without -Dspring.aot.enabled=true.");
        }
        return exposure;
    }

    /**
     * Served without authentication on a loopback address: only this host reaches the endpoints, and only requests
     * addressed to loopback are answered ({@link LoopbackOnly}), so that no web page open on this host can use them.
     */
    public boolean unauthenticatedOnLoopback() {
        return !secured && isLoopback(address);
    }

    /** For messages: "the management port on all addresses", "the server port on 10.0.0.5". */
    public String describe() {
        return (separatePort ? "the management port" : "the server port (no management.server.port)") + " on "
                + (address == null || address.isBlank() ? "every address of the host" : address);
    }

    /**
     * Only an address that is loopback for certain: an IP literal or {@code localhost}. An unset address means all of
     * them; any other host name counts as reachable (what it resolves to could change between this check and the
     * server's bind).
     */
    public static boolean isLoopback(@Nullable String address) {
        if (address == null || address.isBlank()) {
            return false;
        }
        String trimmed = address.trim();
        if (trimmed.equalsIgnoreCase("localhost")) {
            return true;
        }
        String literal = trimmed.startsWith("[") && trimmed.endsWith("]") ? trimmed.substring(1, trimmed.length() - 1)
                : trimmed;
        // Parsed as a literal, never looked up: this also reads a request's Host on an event loop, where
        // InetAddress.getByName would ask DNS for anything it does not take for a literal ("127.0.0.1.", "1.2.3.4.5").
        byte[] parsed = IpLiteral.parse(literal);
        if (parsed == null) {
            return false;
        }
        if (parsed.length == 4) {
            return parsed[0] == 127;
        }
        for (int i = 0; i < 15; i++) {
            if (parsed[i] != 0) {
                return false;
            }
        }
        return parsed[15] == 1;
    }
}
