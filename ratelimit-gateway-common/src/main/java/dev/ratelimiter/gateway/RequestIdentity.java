package dev.ratelimiter.gateway;

import java.net.InetSocketAddress;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.IpLiteral;
import dev.ratelimiter.core.JsonText;
import org.springframework.http.HttpHeaders;

/**
 * Where the filter reads who is calling.
 *
 * <p>The user and tenant headers must be set by the authentication in front of the limiter, which must also strip
 * client-sent copies ({@code ratelimit.identity.strip-headers} does that in the gateway, before the limiter reads
 * them): read alone, the limiter trusts them as given. The client address is the connecting peer's, or, when the
 * peer is a trusted proxy, the one the proxies' {@code Forwarded} / {@code X-Forwarded-For} entries name (see
 * {@link ClientAddressResolver}); it is never looked up in DNS.
 *
 * <p>For a configuration that reads every value from headers, each flavour asks it directly (WebFlux without a
 * {@code Mono}): the hot path stays what it was before identities could come from elsewhere.
 *
 * @param apiKeyHeader header carrying the API key
 * @param userHeader header carrying the end-user id
 * @param tenantHeader header carrying the tenant id
 * @param tierHeader header carrying the tier, set by the authentication (which must strip client-sent copies), or
 * null to look the tier up by the API key
 * @param addresses how the client's address is told from the connection and the proxies' headers
 */
public record RequestIdentity(String apiKeyHeader, String userHeader, String tenantHeader, String tierHeader,
        ClientAddressResolver addresses) implements IdentityDescriber {

    /** Every value of this resolver is a header's. */
    private static final Map<Dimension, IdentityOrigin> HEADERS = Map.of(Dimension.API_KEY, IdentityOrigin.REQUEST,
            Dimension.USER, IdentityOrigin.REQUEST, Dimension.TENANT, IdentityOrigin.REQUEST, Dimension.TIER,
            IdentityOrigin.REQUEST);

    /** Identity from headers, the tier looked up by the API key. */
    public RequestIdentity(String apiKeyHeader, String userHeader, String tenantHeader,
            ClientAddressResolver addresses) {
        this(apiKeyHeader, userHeader, tenantHeader, null, addresses);
    }

    /**
     * The caller these headers name, with the identity headers they carry twice (on any web stack). The filter's hot
     * path: the common request, every header once, allocates nothing but the caller.
     */
    public CallerIdentity caller(HttpHeaders headers) {
        Map<Dimension, RepeatedName> ambiguous = Map.of();
        if (repeated(headers, apiKeyHeader) || repeated(headers, userHeader) || repeated(headers, tenantHeader)) {
            ambiguous = new EnumMap<>(Dimension.class);
            putIfRepeated(ambiguous, headers, Dimension.API_KEY, apiKeyHeader);
            putIfRepeated(ambiguous, headers, Dimension.USER, userHeader);
            putIfRepeated(ambiguous, headers, Dimension.TENANT, tenantHeader);
        }
        return new CallerIdentity(apiKey(headers), user(headers), tenant(headers), tier(headers), ambiguous,
                HEADERS);
    }

    private static void putIfRepeated(Map<Dimension, RepeatedName> ambiguous, HttpHeaders headers,
            Dimension dimension, String name) {
        if (repeated(headers, name)) {
            ambiguous.put(dimension, RepeatedName.header(name));
        }
    }

    @Override
    public String challenge() {
        return "ApiKey header=" + JsonText.quote(apiKeyHeader);
    }

    static boolean repeated(HttpHeaders headers, String name) {
        List<String> values = headers.get(name);
        return values != null && values.size() > 1;
    }

    public String apiKey(HttpHeaders headers) {
        return nonBlank(headers.getFirst(apiKeyHeader));
    }

    public String user(HttpHeaders headers) {
        return nonBlank(headers.getFirst(userHeader));
    }

    public String tenant(HttpHeaders headers) {
        return nonBlank(headers.getFirst(tenantHeader));
    }

    /**
     * The tier the authentication set, or null. Sent twice, one of the two came from the client past an
     * authentication that appends instead of replacing: neither is believed, and the key's tier applies.
     */
    public String tier(HttpHeaders headers) {
        return tierHeader == null || repeated(headers, tierHeader) ? null : nonBlank(headers.getFirst(tierHeader));
    }

    /** The client's network as a bucket name, from the connecting peer and the headers; null without a peer. */
    public String clientIp(InetSocketAddress peer, HttpHeaders headers) {
        if (peer == null) {
            return null;
        }
        // A Netty peer is always resolved (an address, never a name); an unresolved one is read as a literal only.
        byte[] address = peer.getAddress() != null ? peer.getAddress().getAddress() : IpLiteral.parse(peer.getHostString());
        List<String> forwarding = addresses.readsForwardingHeaders()
                ? headers.getOrEmpty(addresses.header().headerName()) : List.of();
        return addresses.resolve(address, forwarding);
    }

    /** Where a dimension's value comes from, in words a client can act on. */
    @Override
    public String describe(Dimension dimension) {
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
        return CallerIdentity.nonBlank(value);
    }
}
