package dev.ratelimiter.gateway;

import java.net.InetSocketAddress;
import java.util.List;

import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.IpLiteral;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;

/**
 * Where the filter reads who is calling.
 *
 * <p>The user and tenant headers must be set by the authentication in front of the limiter, which must also strip
 * client-sent copies: the limiter trusts them as given. The client address is the connecting peer's, or, when the
 * peer is a trusted proxy, the one the proxies' {@code Forwarded} / {@code X-Forwarded-For} entries name (see
 * {@link ClientAddressResolver}); it is never looked up in DNS.
 *
 * @param apiKeyHeader header carrying the API key
 * @param userHeader header carrying the end-user id
 * @param tenantHeader header carrying the tenant id
 * @param addresses how the client's address is told from the connection and the proxies' headers
 */
public record RequestIdentity(String apiKeyHeader, String userHeader, String tenantHeader,
        ClientAddressResolver addresses) {

    /**
     * The identity header the request carries more than once, of those the rules read, or null. Two values are two
     * claims of who is calling; picking one would let a client choose which one the limiter believes while the
     * upstream may believe the other. The API key always counts (it picks the tier); the user and tenant only when a
     * rule reads them.
     */
    String duplicated(HttpHeaders headers, boolean user, boolean tenant) {
        if (repeated(headers, apiKeyHeader)) {
            return apiKeyHeader;
        }
        if (user && repeated(headers, userHeader)) {
            return userHeader;
        }
        return tenant && repeated(headers, tenantHeader) ? tenantHeader : null;
    }

    private static boolean repeated(HttpHeaders headers, String name) {
        List<String> values = headers.get(name);
        return values != null && values.size() > 1;
    }

    String apiKey(HttpHeaders headers) {
        return nonBlank(headers.getFirst(apiKeyHeader));
    }

    String user(HttpHeaders headers) {
        return nonBlank(headers.getFirst(userHeader));
    }

    String tenant(HttpHeaders headers) {
        return nonBlank(headers.getFirst(tenantHeader));
    }

    /** The client's network as a bucket name, or null when the server does not know the peer. */
    String clientIp(ServerWebExchange exchange) {
        InetSocketAddress peer = exchange.getRequest().getRemoteAddress();
        if (peer == null) {
            return null;
        }
        // A Netty peer is always resolved (an address, never a name); an unresolved one is read as a literal only.
        byte[] address = peer.getAddress() != null ? peer.getAddress().getAddress() : IpLiteral.parse(peer.getHostString());
        List<String> forwarding = addresses.readsForwardingHeaders()
                ? exchange.getRequest().getHeaders().getOrEmpty(addresses.header().headerName()) : List.of();
        return addresses.resolve(address, forwarding);
    }

    /** Where a dimension's value comes from, in words a client can act on. */
    String describe(Dimension dimension) {
        if (dimension == null) {
            return "a value";
        }
        return switch (dimension) {
            case API_KEY -> "the " + apiKeyHeader + " header";
            case USER -> "the " + userHeader + " header";
            case TENANT -> "the " + tenantHeader + " header";
            case CLIENT_IP -> "a client address";
            case ROUTE, ROUTE_CLASS -> "a route";
            case TIER -> "a tier";
        };
    }

    private static String nonBlank(String value) {
        return value == null || value.isBlank() ? null : value;
    }
}
