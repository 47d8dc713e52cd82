package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.core.ClientAddressResolver;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Where the filter reads who is calling, bound from {@code ratelimit.identity.*}: the user and tenant headers the
 * authentication sets, or the sources that read them from the authentication itself, the tier when a trusted source
 * names it, and the client address behind trusted proxies.
 */
public class IdentityProperties {

    /** Where the API key is read (by default the ratelimit.api-key.header). */
    @NestedConfigurationProperty
    private final IdentitySourceProperties.ApiKey apiKey = new IdentitySourceProperties.ApiKey();

    /** Where the end-user id is read (by default the user-header), and what it must be. */
    @NestedConfigurationProperty
    private final IdentitySourceProperties.UserOrTenant user = IdentitySourceProperties.UserOrTenant.readingClaim(
            "sub");

    /** Where the tenant id is read (by default the tenant-header), and what it must be. */
    @NestedConfigurationProperty
    private final IdentitySourceProperties.UserOrTenant tenant = IdentitySourceProperties.UserOrTenant
            .readingClaim("tenant_id");

    /** Where the tier is read, when a trusted source names it (by default it is looked up by the API key). */
    @NestedConfigurationProperty
    private final IdentitySourceProperties.Tier tier = new IdentitySourceProperties.Tier();

    /**
     * Longest a source answering through the security context or a Mono (principal, claim, expression, key-resolver,
     * or an application's own RequestIdentityResolver) may take for one request; past it the request is decided as
     * one without identity, as when the source has no value. Header sources answer at once and are not bounded.
     * WebFlux only: on Gateway Server MVC every source is read synchronously from the servlet request.
     */
    private Duration resolveTimeout = Duration.ofSeconds(1);

    /**
     * Header carrying the end-user id, set by the authentication in front of the limiter (which must strip
     * client-sent copies).
     */
    private String userHeader = "X-User-Id";

    /**
     * Header carrying the tenant id, set by the authentication in front of the limiter (which must strip
     * client-sent copies).
     */
    private String tenantHeader = "X-Tenant-Id";

    /**
     * Request headers removed from every request as it arrives, before Spring Security, the limiter and any route,
     * e.g. X-User-Id, X-Tenant-Id: the identity headers clients must not set where nothing in front of the gateway
     * strips them. A route's RemoveRequestHeader or a default filter runs after the limiter and cannot. What an
     * application filter after Spring Security's sets from the verified token is read as before. Empty: none.
     */
    private List<String> stripHeaders = new ArrayList<>();

    /**
     * Addresses or CIDR blocks of the proxies in front of the gateway (load balancers, ingress controllers), e.g.
     * 10.0.0.0/8. Only when the connecting peer is one of them are the Forwarded / X-Forwarded-For entries they
     * appended believed; everything a client wrote itself is ignored. Empty: the connection's address is the
     * client's.
     */
    private List<String> trustedProxies = new ArrayList<>();

    /**
     * The forwarding header the trusted proxies write: x-forwarded-for (nginx, ingress-nginx, AWS ALB, Envoy) or
     * forwarded (RFC 7239). Only that one is read: a proxy passes the other through as the client wrote it.
     */
    private ClientAddressResolver.Header forwardedHeader = ClientAddressResolver.Header.X_FORWARDED_FOR;

    /**
     * Whether rules keyed by client-ip and the per-address policy for unknown API keys may use the client address the
     * web server took from a forwarding header (server.forward-headers-strategy native or framework, or turned on by
     * Spring Boot when it detects a cloud platform such as Kubernetes and the strategy is not set). The server
     * believes the left-most entry, which the client writes itself (Reactor Netty from any peer, Tomcat from any
     * private-range peer), so such a configuration fails the start-up unless this is true. Set it only when every
     * request reaches the gateway through a proxy that replaces those headers; otherwise set
     * server.forward-headers-strategy=none and list the proxies in trusted-proxies.
     */
    private boolean trustServerForwardedAddress;

    /**
     * Leading bits of an IPv4 client address that name its bucket: 32 gives each address its own bucket, 24 one
     * per /24 network.
     */
    private int ipv4Prefix = 32;

    /**
     * Leading bits of an IPv6 client address that name its bucket. One subscriber usually holds a whole /64, so
     * a longer prefix would let one client take as many buckets as it has addresses.
     */
    private int ipv6Prefix = 64;

    /**
     * Removed: it believed the n-th X-Forwarded-For entry whoever sent it. Setting it fails the start-up; list the
     * proxies' addresses in trusted-proxies instead.
     */
    private int trustedProxyHops;

    public IdentitySourceProperties.ApiKey getApiKey() {
        return apiKey;
    }

    public IdentitySourceProperties.UserOrTenant getUser() {
        return user;
    }

    public IdentitySourceProperties.UserOrTenant getTenant() {
        return tenant;
    }

    public Duration getResolveTimeout() {
        return resolveTimeout;
    }

    public void setResolveTimeout(Duration resolveTimeout) {
        this.resolveTimeout = resolveTimeout;
    }

    public IdentitySourceProperties.Tier getTier() {
        return tier;
    }

    public String getUserHeader() {
        return userHeader;
    }

    public void setUserHeader(String userHeader) {
        this.userHeader = userHeader;
    }

    public String getTenantHeader() {
        return tenantHeader;
    }

    public void setTenantHeader(String tenantHeader) {
        this.tenantHeader = tenantHeader;
    }

    public List<String> getStripHeaders() {
        return stripHeaders;
    }

    public void setStripHeaders(List<String> stripHeaders) {
        this.stripHeaders = stripHeaders;
    }

    public List<String> getTrustedProxies() {
        return trustedProxies;
    }

    public void setTrustedProxies(List<String> trustedProxies) {
        this.trustedProxies = trustedProxies;
    }

    public ClientAddressResolver.Header getForwardedHeader() {
        return forwardedHeader;
    }

    public void setForwardedHeader(ClientAddressResolver.Header forwardedHeader) {
        this.forwardedHeader = forwardedHeader;
    }

    public boolean isTrustServerForwardedAddress() {
        return trustServerForwardedAddress;
    }

    public void setTrustServerForwardedAddress(boolean trustServerForwardedAddress) {
        this.trustServerForwardedAddress = trustServerForwardedAddress;
    }

    public int getIpv4Prefix() {
        return ipv4Prefix;
    }

    public void setIpv4Prefix(int ipv4Prefix) {
        this.ipv4Prefix = ipv4Prefix;
    }

    public int getIpv6Prefix() {
        return ipv6Prefix;
    }

    public void setIpv6Prefix(int ipv6Prefix) {
        this.ipv6Prefix = ipv6Prefix;
    }

    @DeprecatedConfigurationProperty(replacement = "ratelimit.identity.trusted-proxies",
            reason = "believed X-Forwarded-For from any peer")
    public int getTrustedProxyHops() {
        return trustedProxyHops;
    }

    public void setTrustedProxyHops(int trustedProxyHops) {
        this.trustedProxyHops = trustedProxyHops;
    }
}
