package dev.ratelimiter.gateway;

import java.security.Principal;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.JsonText;

/**
 * The caller's identity from the sources {@code ratelimit.identity.*} names, per dimension, whatever the web stack:
 * the first source of a dimension's list that has a value gives it. A header sent twice, read as a header or by an
 * expression, or a query parameter an expression names sent twice, stops its dimension's lookup (a later source would let the client choose which value counts): the
 * request is ambiguous. The tier, from a trusted source only, is never read from a name sent twice. Each value records
 * where it came from ({@link IdentityOrigin}): its namespace, and whether a token vouched for it. Each flavour
 * hands it its request ({@link IdentityRequest}) and the authenticated principal, which it fetches only when
 * {@link #readsPrincipal()}.
 */
public final class IdentitySources implements IdentityDescriber {

    private final List<IdentitySource> apiKey;
    private final List<IdentitySource> user;
    private final List<IdentitySource> tenant;
    private final IdentitySource tier;
    private final boolean readsPrincipal;
    /** Per dimension, whether its list reads the token: a value the client wrote there is then unvouched. */
    private final boolean apiKeyReadsToken;
    private final boolean userReadsToken;
    private final boolean tenantReadsToken;

    /**
     * @param apiKey, user, tenant each dimension's sources, in order
     * @param tier the trusted tier source, or null to look the tier up by the API key
     */
    public IdentitySources(List<IdentitySource> apiKey, List<IdentitySource> user, List<IdentitySource> tenant,
            IdentitySource tier) {
        this.apiKey = List.copyOf(apiKey);
        this.user = List.copyOf(user);
        this.tenant = List.copyOf(tenant);
        this.tier = tier;
        this.readsPrincipal = Stream.of(this.apiKey, this.user, this.tenant, tier == null ? List.<IdentitySource>of()
                : List.of(tier)).flatMap(List::stream).anyMatch(IdentitySource::readsPrincipal);
        this.apiKeyReadsToken = readsToken(this.apiKey);
        this.userReadsToken = readsToken(this.user);
        this.tenantReadsToken = readsToken(this.tenant);
    }

    private static boolean readsToken(List<IdentitySource> sources) {
        return sources.stream().anyMatch(IdentitySource::readsPrincipal);
    }

    /** Whether a source reads the principal: only then need the caller's flavour look it up. */
    public boolean readsPrincipal() {
        return readsPrincipal;
    }

    /** The caller of this request; {@code principal} is the authenticated caller, or null. Never blocks. */
    public CallerIdentity identify(IdentityRequest request, Principal principal) {
        Map<Dimension, RepeatedName> ambiguous = new EnumMap<>(Dimension.class);
        Map<Dimension, IdentityOrigin> origins = new EnumMap<>(Dimension.class);
        String key = first(Dimension.API_KEY, apiKey, apiKeyReadsToken, request, principal, ambiguous, origins);
        String userId = first(Dimension.USER, user, userReadsToken, request, principal, ambiguous, origins);
        String tenantId = first(Dimension.TENANT, tenant, tenantReadsToken, request, principal, ambiguous, origins);
        String trustedTier = tier == null || tier.repeated(request) != null ? null
                : tier.read(request, principal);
        if (trustedTier != null) {
            origins.put(Dimension.TIER, tier.origin());
        }
        return new CallerIdentity(key, userId, tenantId, trustedTier, ambiguous, origins);
    }

    private static String first(Dimension dimension, List<IdentitySource> sources, boolean readsToken,
            IdentityRequest request, Principal principal, Map<Dimension, RepeatedName> ambiguous,
            Map<Dimension, IdentityOrigin> origins) {
        for (IdentitySource source : sources) {
            RepeatedName repeated = source.repeated(request);
            if (repeated != null) {
                ambiguous.put(dimension, repeated);
                return null;
            }
            IdentityValue value = source.value(request, principal);
            if (value != null) {
                // a value the client wrote where the list also reads the token: the token did not say, nobody vouched
                origins.put(dimension, readsToken && value.origin() == IdentityOrigin.REQUEST
                        ? IdentityOrigin.UNVOUCHED : value.origin());
                return value.value();
            }
        }
        return null;
    }

    @Override
    public String describe(Dimension dimension) {
        return switch (dimension) {
            case API_KEY -> described(apiKey);
            case USER -> described(user);
            case TENANT -> described(tenant);
            default -> IdentityDescriber.super.describe(dimension);
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
