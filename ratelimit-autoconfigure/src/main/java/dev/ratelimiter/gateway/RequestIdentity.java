package dev.ratelimiter.gateway;

import java.net.InetSocketAddress;

import org.springframework.cloud.gateway.support.ipresolver.XForwardedRemoteAddressResolver;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;

/**
 * Where the filter reads who is calling.
 *
 * <p>The user and tenant headers must be set by the authentication in front of the limiter, which must also strip
 * client-sent copies: the limiter trusts them as given. The client IP is the connection's remote address, or, with
 * {@code trustedProxyHops > 0}, the X-Forwarded-For entry that many hops from the right, so that a client cannot
 * pick its own address by sending the header.
 *
 * @param apiKeyHeader header carrying the API key
 * @param userHeader header carrying the end-user id
 * @param tenantHeader header carrying the tenant id
 * @param trustedProxyHops proxies in front of the gateway that append to X-Forwarded-For
 */
public record RequestIdentity(String apiKeyHeader, String userHeader, String tenantHeader, int trustedProxyHops) {

    String apiKey(HttpHeaders headers) {
        return nonBlank(headers.getFirst(apiKeyHeader));
    }

    String user(HttpHeaders headers) {
        return nonBlank(headers.getFirst(userHeader));
    }

    String tenant(HttpHeaders headers) {
        return nonBlank(headers.getFirst(tenantHeader));
    }

    String clientIp(ServerWebExchange exchange) {
        InetSocketAddress address = trustedProxyHops > 0
                ? XForwardedRemoteAddressResolver.maxTrustedIndex(trustedProxyHops).resolve(exchange)
                : exchange.getRequest().getRemoteAddress();
        if (address == null) {
            return null;
        }
        return address.getAddress() != null ? address.getAddress().getHostAddress() : address.getHostString();
    }

    private static String nonBlank(String value) {
        return value == null || value.isBlank() ? null : value;
    }
}
