package dev.ratelimiter.autoconfigure.security;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import dev.ratelimiter.autoconfigure.IdentityProperties;
import dev.ratelimiter.autoconfigure.IdentitySourceProperties;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.UnknownValuePolicy;
import org.springframework.boot.cloud.CloudPlatform;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Whether the web server puts a forwarding header's entry in place of the connecting peer before the limiter reads
 * the client address. Spring Boot does so for {@code server.forward-headers-strategy} native or framework and, when the
 * strategy is not set, on every cloud platform it detects ({@link CloudPlatform#isUsingForwardHeaders()}): on
 * Kubernetes, in every pod. Reactor Netty then believes the left-most {@code X-Forwarded-For} or {@code Forwarded}
 * entry from any peer and Tomcat's {@code RemoteIpValve} from any private-range peer, so the client writes its own
 * address and {@code ratelimit.identity.trusted-proxies} never sees the real hop. Rules keyed by that address are
 * refused then, unless the operator said the server's reading is to be trusted.
 */
public final class ServerForwarding {

    static final String STRATEGY = "server.forward-headers-strategy";

    static final String TRUST = "ratelimit.identity.trust-server-forwarded-address";

    /** A server that reports the connecting peer as it is. */
    public static final ServerForwarding NONE = new ServerForwarding(null, Set.of());

    /** How the server came to rewrite the address, in words; null when it does not, or when that is trusted. */
    private final String cause;
    /**
     * The dimensions whose unvouched values are counted per client address ({@code identity.user|tenant.unknown.policy
     * per-address} with a source list that also reads the token): a rule keyed by one of them is keyed by the address
     * for such callers.
     */
    private final Set<Dimension> perAddress;

    private ServerForwarding(String cause, Set<Dimension> perAddress) {
        this.cause = cause;
        this.perAddress = perAddress;
    }

    /** The server's handling as this environment configures it, decided the way Spring Boot's web servers decide it. */
    public static ServerForwarding of(Environment environment, IdentityProperties identity) {
        if (identity.isTrustServerForwardedAddress()) {
            return NONE;
        }
        Set<Dimension> perAddress = EnumSet.noneOf(Dimension.class);
        if (countsUnvouchedPerAddress(identity.getUser())) {
            perAddress.add(Dimension.USER);
        }
        if (countsUnvouchedPerAddress(identity.getTenant())) {
            perAddress.add(Dimension.TENANT);
        }
        String strategy = Binder.get(environment).bind(STRATEGY, String.class).orElse(null);
        // Spring Boot reads the value leniently (case, and anything but letters and digits, ignored: "Native", "nat-ive")
        // and a blank one as not set, so its cloud detection decides then.
        String named = strategy == null ? "" : strategy.replaceAll("[^A-Za-z0-9]", "").toLowerCase(Locale.ROOT);
        if (!named.isEmpty()) {
            return named.equals("native") || named.equals("framework")
                    ? new ServerForwarding(STRATEGY + " is " + named, perAddress) : NONE;
        }
        CloudPlatform platform = CloudPlatform.getActive(environment);
        return platform != null && platform.isUsingForwardHeaders() ? new ServerForwarding(STRATEGY + " is not set "
                + "and Spring Boot detected the cloud platform " + platform + ", which turns it on", perAddress) : NONE;
    }

    /** Whether a value the client states beside the token (unvouched) is counted per client address. */
    private static boolean countsUnvouchedPerAddress(IdentitySourceProperties.UserOrTenant dimension) {
        List<IdentitySourceProperties.Source> sources = dimension.getSource();
        // Unvouched: a header read where the list also reads the token, or an expression that read the request.
        boolean readsToken = sources.contains(IdentitySourceProperties.Source.CLAIM)
                || sources.contains(IdentitySourceProperties.Source.PRINCIPAL);
        boolean canBeUnvouched = sources.contains(IdentitySourceProperties.Source.EXPRESSION)
                || readsToken && sources.contains(IdentitySourceProperties.Source.HEADER);
        return canBeUnvouched && dimension.getUnknown().getPolicy() == UnknownValuePolicy.PER_ADDRESS;
    }

    /** Refuses, naming what to set, a configuration whose rules key by an address the client chooses. */
    public RuleSet requireReliable(RuleSet configured) {
        if (cause == null) {
            return configured;
        }
        List<String> keyed = new ArrayList<>(configured.rules().values().stream()
                .filter(rule -> keysByAddress(rule.key())).map(this::describe).toList());
        if (!keyed.isEmpty()) {
            throw new InvalidLimitException(STRATEGY, refusal("The limiter buckets clients by their address ("
                    + String.join(", ", keyed) + ")"));
        }
        return configured;
    }

    /** Refuses a runtime rule keyed by an address the client chooses: the operator endpoints answer invalid_rule. */
    public void requireReliable(String id, List<Dimension> key) {
        if (cause != null && keysByAddress(key)) {
            throw new InvalidLimitException("ratelimit.rules." + id + ".key", refusal("Rule '" + id + "' keys by "
                    + "the client address"));
        }
    }

    private String refusal(String what) {
        return what + ", but " + cause + ": the web server replaces the connecting address with the left-most "
                + "X-Forwarded-For or Forwarded entry, which the client writes itself, so every client could choose "
                + "its own bucket. Set " + STRATEGY + "=none and list your proxies in "
                + "ratelimit.identity.trusted-proxies (the limiter then reads the header itself, only as far as they "
                + "wrote it); or, if every request reaches the gateway through a proxy that replaces those headers, "
                + "set " + TRUST + "=true.";
    }

    private boolean keysByAddress(List<Dimension> key) {
        return key != null && (key.contains(Dimension.CLIENT_IP) || key.stream().anyMatch(perAddress::contains));
    }

    private String describe(Rule rule) {
        if (RuleSet.UNKNOWN_KEYS.equals(rule.id())) {
            return "ratelimit.api-key.unknown.policy per-address";
        }
        return rule.key().contains(Dimension.CLIENT_IP) ? "rule '" + rule.id() + "'" : "rule '" + rule.id() + "', keyed "
                + "by a user or tenant whose unvouched values ratelimit.identity.*.unknown.policy per-address counts "
                + "by address";
    }
}
