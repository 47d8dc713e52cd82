package dev.ratelimiter.autoconfigure.usage;

import java.security.Principal;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.autoconfigure.identity.AdapterSettings;
import dev.ratelimiter.autoconfigure.rules.RuleProblems;
import dev.ratelimiter.autoconfigure.rules.RulesApiAccess;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.UsageLookup;
import dev.ratelimiter.core.UsageQuery;
import dev.ratelimiter.core.UsageQueryException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import reactor.core.publisher.Mono;

/**
 * The usage API's one operation, for either web stack to serve: the caller's role (a viewer may read, as the rules),
 * the query ({@link UsageQueries}), the reading ({@link UsageLookup}), and every failure as a problem: 400 for a query
 * that cannot be read, 404 for an unknown rule, 503 when the store does not answer within its bound. Never 500: the
 * store is what can fail here, and a client of an operator API is told so and when to try again.
 */
public final class UsageOperations {

    private static final Logger logger = LoggerFactory.getLogger(UsageOperations.class);

    /** What the store-unavailable answer asks a client to wait, in seconds. */
    static final String RETRY_AFTER_SECONDS = "1";

    private final UsageLookup lookup;
    private final UsageQueries queries;
    private final ClientIds clientIds;
    private final RulesApiAccess access;
    private final @Nullable String region;

    /**
     * @param clientIds the hash that names buckets, to show the client as its client id
     * @param region this instance's region when global rules are split between regions, else null
     */
    public UsageOperations(UsageLookup lookup, UsageQueries queries, ClientIds clientIds, RulesApiAccess access,
            @Nullable String region) {
        this.lookup = lookup;
        this.queries = queries;
        this.clientIds = clientIds;
        this.access = access;
        this.region = region;
    }

    /**
     * The operations over the application's beans (from the management context, its parent's), or null where the
     * limiter has no usage to read. Roles are checked when there are operator accounts, as for the rules API.
     */
    public static @Nullable UsageOperations of(ApplicationContext context) {
        UsageLookup lookup = context.getBeanProvider(UsageLookup.class).getIfAvailable();
        RateLimitProperties properties = context.getBeanProvider(RateLimitProperties.class).getIfAvailable();
        ClientIdKeyring clientIds = context.getBeanProvider(ClientIdKeyring.class).getIfAvailable();
        if (lookup == null || properties == null || clientIds == null) {
            return null;
        }
        RulesApiAccess access = context.getBeanProvider(OperatorAccounts.class).getIfAvailable() != null
                ? RulesApiAccess.byRole() : RulesApiAccess.OPEN;
        RateLimitEvaluator evaluator = context.getBeanProvider(RateLimitEvaluator.class).getIfAvailable();
        return new UsageOperations(lookup, new UsageQueries(AdapterSettings.apiKeyFormat(properties)),
                clientIds.current(), access, evaluator != null ? evaluator.region() : null);
    }

    /** {@code GET} of the usage the parameters ask for, by an operator. */
    public Mono<RulesApiOperations.Answer> read(Principal caller, Map<String, List<String>> parameters,
            String instance) {
        if (!access.mayRead(caller)) {
            return Mono.just(RuleProblems.answer(instance, HttpStatus.FORBIDDEN, "forbidden", null,
                    "Reading usage needs the viewer or the admin role."));
        }
        UsageQuery query;
        try {
            query = queries.parse(parameters);
        }
        catch (UsageQueryException ex) {
            return Mono.just(refused(ex, instance));
        }
        return answer(query, instance);
    }

    /**
     * The usage of a query already resolved from a request (the caller's own, {@code /ratelimit/me}): no role asked,
     * the identity is the caller's.
     */
    public Mono<RulesApiOperations.Answer> answer(UsageQuery query, String instance) {
        String clientId = query.clientId() != null ? query.clientId()
                : query.apiKey() != null ? clientIds.of(query.apiKey()) : null;
        return Mono.defer(() -> lookup.read(query))
                .map(usage -> ok(UsageView.of(query, clientId, usage, region)))
                .onErrorResume(UsageQueryException.class, ex -> Mono.just(refused(ex, instance)))
                .onErrorResume(ex -> !(ex instanceof UsageQueryException), ex -> {
                    logger.debug("Usage could not be read from the store", ex);
                    return Mono.just(unavailable(instance, ex));
                });
    }

    /** The answer to any method but {@code GET} and {@code HEAD} on a usage path: 405, naming the two. */
    public static RulesApiOperations.Answer onlyReads(String instance) {
        RulesApiOperations.Answer answer = RuleProblems.answer(instance, HttpStatus.METHOD_NOT_ALLOWED,
                "method_not_allowed", null, "Usage can only be read: use GET.");
        answer.headers().setAllow(new LinkedHashSet<>(List.of(HttpMethod.GET, HttpMethod.HEAD)));
        return answer;
    }

    private static RulesApiOperations.Answer refused(UsageQueryException ex, String instance) {
        return ex.kind() == UsageQueryException.Kind.UNKNOWN_RULE
                ? RuleProblems.answer(instance, HttpStatus.NOT_FOUND, "unknown_rule", ex.field(), ex.getMessage())
                : RuleProblems.answer(instance, HttpStatus.BAD_REQUEST, "invalid_query", ex.field(), ex.getMessage());
    }

    private static RulesApiOperations.Answer unavailable(String instance, Throwable cause) {
        RulesApiOperations.Answer problem = RuleProblems.answer(instance, HttpStatus.SERVICE_UNAVAILABLE,
                "store_unavailable", null, "The rate limiter's store could not be read ("
                        + cause.getClass().getSimpleName() + ": not connected, not answering within the store's "
                        + "longest wait, or refusing the read); usage cannot be read until it answers. Try again "
                        + "shortly.");
        problem.headers().set(HttpHeaders.RETRY_AFTER, RETRY_AFTER_SECONDS);
        return problem;
    }

    private static RulesApiOperations.Answer ok(Object body) {
        HttpHeaders headers = new HttpHeaders();
        headers.setContentType(MediaType.APPLICATION_JSON);
        // a reading of a moment: no cache may serve it later
        headers.set(HttpHeaders.CACHE_CONTROL, "no-store");
        return new RulesApiOperations.Answer(HttpStatus.OK, headers, body);
    }
}
