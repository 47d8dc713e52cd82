package dev.ratelimiter.autoconfigure.usage;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.autoconfigure.UsageApiProperties;
import dev.ratelimiter.autoconfigure.identity.AdapterSettings;
import dev.ratelimiter.autoconfigure.rules.RuleProblems;
import dev.ratelimiter.autoconfigure.rules.RulesApiAccess;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPaths;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.UsageLookup;
import dev.ratelimiter.core.UsageQuery;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.AdmissionRequest;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.RefusalAnswer;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import reactor.core.publisher.Mono;

/**
 * The caller's own usage ({@code /ratelimit/me}), for either flavour to serve: the caller counted exactly as a
 * decision counts it ({@link Admission#count}: the same refusals of a missing, malformed, duplicated, unvouched or
 * unknown identity, the same namespaces and tier), so a client reads its own buckets and can name no other — the query
 * takes only {@code route}, {@code path}, {@code routeClass} and {@code rule}, never an identity.
 *
 * <p>It is not counted against the caller's rules: a reading that spent would change what it reads. It is guarded
 * instead by a small bucket of its own per caller in this instance's memory ({@link #PER_SECOND} a second), so that a
 * client polling in a loop costs the store at most that; past it, 429 with {@code Retry-After}.
 */
public final class CallerUsage {

    /** Readings a caller may make per second on one instance. */
    static final int PER_SECOND = 5;

    private static final Set<String> PARAMETERS = Set.of("route", "path", "routeClass", "rule");

    private static final Rule GUARD = new Rule("ratelimit-me", "ratelimit-me", Match.ANY,
            List.of(Dimension.API_KEY), new TokenBucketLimit(PER_SECOND, PER_SECOND, Duration.ofSeconds(1)), 1,
            Mode.ENFORCE, FailureMode.OPEN);

    /**
     * What to answer: a refusal to render as a routed request's refusal is rendered, or the answer.
     *
     * @param refusal the identity's refusal, or null
     * @param answer the answer when there is no refusal, else null
     */
    public record Reply(@Nullable RefusalAnswer refusal, Mono<RulesApiOperations.@Nullable Answer> answer) {
    }

    private final Admission admission;
    private final UsageOperations operations;
    private final ClientIds clientIds;
    private final LocalBucketStore guard;

    /**
     * @param admission the request path's checks of an identity, with the same settings as the limiter's own
     * @param clientIds the hash the guard's buckets are named by
     */
    public CallerUsage(Admission admission, UsageOperations operations, ClientIds clientIds) {
        this(admission, operations, clientIds, System::nanoTime);
    }

    /** As above, the guard's buckets refilled by {@code nanoClock} (tests hold it still). */
    CallerUsage(Admission admission, UsageOperations operations, ClientIds clientIds, LongSupplier nanoClock) {
        this.admission = admission;
        this.operations = operations;
        this.clientIds = clientIds;
        this.guard = new LocalBucketStore(10_000, nanoClock);
    }

    /** The caller's usage over the application's beans, as both flavours wire it. */
    public static CallerUsage of(Admission admission, UsageLookup lookup, RateLimitProperties properties,
            ClientIdKeyring clientIds, RateLimitEvaluator evaluator) {
        UsageOperations operations = new UsageOperations(lookup,
                new UsageQueries(AdapterSettings.apiKeyFormat(properties)), clientIds.current(), RulesApiAccess.OPEN,
                evaluator.region());
        return new CallerUsage(admission, operations, clientIds.current());
    }

    /** {@code ratelimit.usage.me.path}, checked: a start-up with a path that is none fails naming the setting. */
    public static String path(UsageApiProperties usage) {
        String path = usage.getMe().getPath();
        if (path == null || !path.matches("/[A-Za-z0-9._~/-]*")) {
            throw new InvalidLimitException("ratelimit.usage.me.path", "ratelimit.usage.me.path is '" + path
                    + "': give a path from the root of letters, digits, '/', '.', '_', '~' or '-' (/ratelimit/me).");
        }
        return path;
    }

    /**
     * @param request the request to the usage path, as a decision would see it (no route)
     * @param parameters its query parameters
     * @param instance its path, for the problems' {@code instance}
     */
    public Reply read(RuleSet rules, CallerIdentity caller, AdmissionRequest request,
            Map<String, List<String>> parameters, String instance) {
        for (Map.Entry<String, List<String>> parameter : parameters.entrySet()) {
            if (!PARAMETERS.contains(parameter.getKey()) || parameter.getValue().size() > 1) {
                return answer(RuleProblems.answer(instance, HttpStatus.BAD_REQUEST, "invalid_query", null,
                        "This reads your own usage: it takes route, path, routeClass and rule, each at most once, "
                                + "and never an identity."));
            }
        }
        Admission.Counted counted = admission.count(rules, caller, request);
        if (counted.refusal() != null) {
            return new Reply(counted.refusal(), null);
        }
        RequestAttributes attributes = counted.attributes();
        if (attributes.apiKey() == null && attributes.user() == null && attributes.tenant() == null) {
            return answer(RuleProblems.answer(instance, HttpStatus.UNAUTHORIZED, "missing_identity", null,
                    "Send the API key (or the credentials) your requests carry: the usage read is the caller's "
                            + "own."));
        }
        // a key nobody listed (api-key.unknown.policy per-address) is counted by its address, as the routes count it:
        // made-up keys rotated from one address share one guard, or each would buy another 5 store reads a second
        String who = RuleSet.UNKNOWN_KEYS.equals(attributes.tier()) ? "unknown-key\0address=" + attributes.clientIp()
                : attributes.apiKey() != null ? attributes.apiKey()
                : "user=" + attributes.user() + "\0tenant=" + attributes.tenant();
        if (!guard.evaluateNow(List.of(new Check(GUARD, new BucketKey(clientIds.of(who), "me"), 1, false)))
                .allowed()) {
            RulesApiOperations.Answer tooMany = RuleProblems.answer(instance, HttpStatus.TOO_MANY_REQUESTS,
                    "too_many_reads", null, "Your usage was read " + PER_SECOND + " times in the last second here; "
                            + "read it again shortly.");
            tooMany.headers().set(HttpHeaders.RETRY_AFTER, "1");
            return answer(tooMany);
        }
        String path = first(parameters, "path");
        if (path != null && !path.startsWith("/")) {
            return answer(RuleProblems.answer(instance, HttpStatus.BAD_REQUEST, "invalid_query", "path",
                    "path must start with '/', as a request's does."));
        }
        UsageQuery query;
        try {
            // normalised as the request path matches rules, as /v1/usage reads it
            query = new UsageQuery(attributes.apiKey(), null, attributes.user(), attributes.tenant(),
                    attributes.clientIp(), first(parameters, "route"), path == null ? null
                            : RequestPaths.normalise(path),
                    first(parameters, "routeClass"), attributes.tier(), first(parameters, "rule"));
        }
        catch (RuntimeException ex) {
            return answer(RuleProblems.answer(instance, HttpStatus.BAD_REQUEST, "invalid_query", null,
                    ex.getMessage()));
        }
        return new Reply(null, operations.answer(query, instance));
    }

    private static Reply answer(RulesApiOperations.Answer answer) {
        return new Reply(null, Mono.just(answer));
    }

    private static @Nullable String first(Map<String, List<String>> parameters, String name) {
        List<String> values = parameters.get(name);
        return values == null || values.isEmpty() || values.get(0) == null || values.get(0).isEmpty() ? null
                : values.get(0);
    }
}
