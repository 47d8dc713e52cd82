package dev.ratelimiter.autoconfigure.security;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;

import dev.ratelimiter.autoconfigure.rules.RuleProblems;
import org.jspecify.annotations.Nullable;

/**
 * The requests an operator port without authentication answers. Listening on loopback, it is reached from this host
 * only — but a browser on this host reaches it for any web page it shows. A page cannot read a cross-site answer or
 * send JSON across sites without CORS, yet a site whose name it makes resolve to 127.0.0.1 (DNS rebinding) is
 * same-origin with the port, and can then switch the limiter off. Such requests name that site: in {@code Host}
 * (the name the page was loaded from) or in {@code Origin} (a page's fetch). Tools — curl, probes, a port-forward —
 * send a loopback {@code Host} and no {@code Origin}. So a request is answered only when its {@code Host} is a
 * loopback name or address ({@code localhost}, 127.0.0.0/8, {@code [::1]}, with or without a port) and it carries no
 * {@code Origin} or a loopback one.
 */
public final class LoopbackOnly {

    /** The {@code error} of a request addressed to another host name. */
    public static final String HOST_NOT_LOOPBACK = "host_not_loopback";

    /** The {@code error} of a request sent by a web page of another site. */
    public static final String CROSS_SITE = "cross_site_request";

    private LoopbackOnly() {
    }

    /**
     * The {@code error} a request is refused with, or null when it may be answered.
     *
     * @param hosts its {@code Host} headers: none is answered (HTTP/1.0; no browser leaves it out), two are not
     * @param origins its {@code Origin} headers
     */
    public static @Nullable String refusal(@Nullable List<String> hosts, @Nullable List<String> origins) {
        if (hosts != null && (hosts.size() > 1 || hosts.size() == 1 && !isLoopbackHost(hosts.get(0)))) {
            return HOST_NOT_LOOPBACK;
        }
        if (origins != null && (origins.size() > 1 || origins.size() == 1 && !isLoopbackOrigin(origins.get(0)))) {
            return CROSS_SITE;
        }
        return null;
    }

    /** A {@code Host} value naming loopback: a loopback name or address, and a port or none. */
    static boolean isLoopbackHost(String value) {
        String host = value.trim();
        String port;
        if (host.startsWith("[")) {
            int end = host.indexOf(']');
            if (end < 0) {
                return false;
            }
            port = host.substring(end + 1);
            host = host.substring(0, end + 1);
        }
        else {
            int colon = host.indexOf(':');
            port = colon < 0 ? "" : host.substring(colon);
            host = colon < 0 ? host : host.substring(0, colon);
        }
        return (port.isEmpty() || port.matches(":[0-9]{1,5}")) && OperatorEndpointExposure.isLoopback(host);
    }

    /** An {@code Origin} of a page served from loopback (any port); {@code null} (an opaque origin) is not. */
    static boolean isLoopbackOrigin(String value) {
        try {
            URI origin = new URI(value.trim());
            String scheme = origin.getScheme();
            return ("http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme)) && origin.getHost() != null
                    && origin.getRawUserInfo() == null && OperatorEndpointExposure.isLoopback(origin.getHost());
        }
        catch (URISyntaxException ex) {
            return false;
        }
    }

    /** The 403 problem document (RFC 9457) of a refusal; nothing of the request is echoed. */
    public static String problem(String error) {
        String detail = HOST_NOT_LOOPBACK.equals(error)
                ? "The operator endpoints on this port take no credentials, so they answer only requests addressed "
                        + "to this host by a loopback name or address (Host: localhost or 127.0.0.1, with the port). "
                        + "This request named another host, as a web page does through a name that resolves here."
                : "The operator endpoints on this port take no credentials, so they answer no request that a web "
                        + "page of another site sends (its Origin header is not a loopback origin).";
        return "{\"type\":\"" + RuleProblems.TYPE_PREFIX + error.replace('_', '-') + "\",\"title\":\"Forbidden\","
                + "\"status\":403,\"detail\":\"" + detail + "\",\"error\":\"" + error + "\"}";
    }
}
