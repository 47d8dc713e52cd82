package dev.ratelimiter.gateway;

import java.security.Principal;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.JsonText;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The caller's identity from the sources {@code ratelimit.identity.*} names, per dimension: the first source of a
 * dimension's list that has a value gives it. A header sent twice, read as a header or by an expression, stops its
 * dimension's lookup (a later source would let the client choose which value counts): the request is ambiguous. The
 * principal is waited for only when a source reads it; the tier, from a trusted source only, is never read from a
 * header sent twice.
 */
public final class ConfiguredIdentityResolver implements RequestIdentityResolver {

    /**
     * What Spring Cloud Gateway's own {@code RequestRateLimiter} puts in place of an empty key, and so what a key
     * resolver written for it may answer for a request without one.
     */
    static final String EMPTY_KEY = "____EMPTY_KEY__";

    private final List<IdentitySource> apiKey;
    private final List<IdentitySource> user;
    private final List<IdentitySource> tenant;
    private final IdentitySource tier;
    private final KeyResolver keyResolver;
    private final String keyResolverName;
    private final boolean readsPrincipal;

    /**
     * @param apiKey, user, tenant each dimension's sources, in order (the API key's are not asked when a
     * {@code keyResolver} is given)
     * @param tier the trusted tier source, or null to look the tier up by the API key
     * @param keyResolver a Spring Cloud Gateway key resolver that gives the API key, or null
     * @param keyResolverName its bean name, for messages
     */
    public ConfiguredIdentityResolver(List<IdentitySource> apiKey, List<IdentitySource> user,
            List<IdentitySource> tenant, IdentitySource tier, KeyResolver keyResolver, String keyResolverName) {
        this.apiKey = keyResolver != null ? List.of() : List.copyOf(apiKey);
        this.user = List.copyOf(user);
        this.tenant = List.copyOf(tenant);
        this.tier = tier;
        this.keyResolver = keyResolver;
        this.keyResolverName = keyResolverName;
        this.readsPrincipal = Stream.of(this.apiKey, this.user, this.tenant, tier == null ? List.<IdentitySource>of()
                : List.of(tier)).flatMap(List::stream).anyMatch(IdentitySource::readsPrincipal);
    }

    @Override
    public Mono<CallerIdentity> resolve(ServerWebExchange exchange) {
        Mono<CallerIdentity> identified = readsPrincipal
                ? exchange.getPrincipal().map(principal -> identify(exchange, principal))
                        .switchIfEmpty(Mono.fromSupplier(() -> identify(exchange, null)))
                : Mono.fromSupplier(() -> identify(exchange, null));
        if (keyResolver == null) {
            return identified;
        }
        return identified.flatMap(caller -> keyResolver.resolve(exchange)
                .filter(key -> !EMPTY_KEY.equals(key) && !key.isBlank())
                .map(key -> new CallerIdentity(key, caller.user(), caller.tenant(), caller.tier(), caller.ambiguous()))
                .defaultIfEmpty(caller));
    }

    private CallerIdentity identify(ServerWebExchange exchange, Principal principal) {
        Map<Dimension, String> ambiguous = new EnumMap<>(Dimension.class);
        String key = first(Dimension.API_KEY, apiKey, exchange, principal, ambiguous);
        String userId = first(Dimension.USER, user, exchange, principal, ambiguous);
        String tenantId = first(Dimension.TENANT, tenant, exchange, principal, ambiguous);
        String trustedTier = tier == null || tier.repeatedHeader(exchange.getRequest().getHeaders()) != null ? null
                : tier.read(exchange, principal);
        return new CallerIdentity(key, userId, tenantId, trustedTier, ambiguous);
    }

    private static String first(Dimension dimension, List<IdentitySource> sources, ServerWebExchange exchange,
            Principal principal, Map<Dimension, String> ambiguous) {
        HttpHeaders headers = exchange.getRequest().getHeaders();
        for (IdentitySource source : sources) {
            String repeated = source.repeatedHeader(headers);
            if (repeated != null) {
                ambiguous.put(dimension, repeated);
                return null;
            }
            String value = source.read(exchange, principal);
            if (value != null) {
                return value;
            }
        }
        return null;
    }

    @Override
    public String describe(Dimension dimension) {
        return switch (dimension) {
            case API_KEY -> keyResolver != null ? "the request, as the KeyResolver '" + keyResolverName
                    + "' reads it"
                    : described(apiKey);
            case USER -> described(user);
            case TENANT -> described(tenant);
            default -> RequestIdentityResolver.super.describe(dimension);
        };
    }

    private static String described(List<IdentitySource> sources) {
        return sources.stream().map(IdentitySource::describe).collect(Collectors.joining(" or "));
    }

    /** Bearer when the key comes with the token; the header's own scheme when it is sent in one (both: both). */
    @Override
    public String challenge() {
        String challenges = apiKey.stream()
                .map(source -> source instanceof IdentitySource.HeaderSource header
                        ? "ApiKey header=" + JsonText.quote(header.name()) : "Bearer")
                .distinct().collect(Collectors.joining(", "));
        return challenges.isEmpty() ? "Bearer" : challenges;
    }
}
