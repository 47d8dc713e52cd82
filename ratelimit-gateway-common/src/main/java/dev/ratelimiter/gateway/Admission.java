package dev.ratelimiter.gateway;

import java.time.Clock;
import java.util.Map;
import java.util.function.Supplier;

import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPaths;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.UnknownApiKeyPolicy;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import io.micrometer.observation.Observation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import reactor.core.publisher.Mono;

/**
 * The admission pipeline, whatever the web stack: the identity answers the limiter gives before asking the store, the
 * tier it limits by, the request as the rules see it, the store's check, and what a verdict becomes (the rate-limit
 * fields, a 429 or 503). Written once, here: the WebFlux filter and the Server MVC filter each only find the caller,
 * wait for the {@link Decision} their own way and write its answer, so both flavours answer alike.
 */
public final class Admission {

    private static final Logger logger = LoggerFactory.getLogger(Admission.class);

    private final RateLimitEvaluator evaluator;
    private final IdentityDescriber describer;
    private final String apiKeySource;
    private final String challenge;
    private final ApiKeyRefusals refusals;
    private final ApiKeyFormat apiKeyFormat;
    private final IdentityValuePolicy users;
    private final IdentityValuePolicy tenants;
    private final VerdictListener listener;
    private final Clock clock;
    private final DecisionObservations observations;
    private final WarnOnce unknownTiers = new WarnOnce(logger);
    private final ThrottledLog failedDecisions = new ThrottledLog(logger);
    private final WarnOnce tokenKeysListedAsHeaderKeys = new WarnOnce(logger);
    private final CostExpressions costs = new CostExpressions();

    /**
     * @param describer names the sources of the identity in the answers; its description of the API key and its
     * challenge are asked once, here
     */
    public Admission(RateLimitEvaluator evaluator, IdentityDescriber describer, ApiKeyRefusals refusals,
            ApiKeyFormat apiKeyFormat, VerdictListener listener, Clock clock) {
        this(evaluator, describer, refusals, apiKeyFormat, IdentityValuePolicy.ANY, IdentityValuePolicy.ANY, listener,
                clock);
    }

    /**
     * @param describer names the sources of the identity in the answers; its description of the API key and its
     * challenge are asked once, here
     * @param users, tenants what user and tenant ids must be, and what an unvouched one gets
     */
    public Admission(RateLimitEvaluator evaluator, IdentityDescriber describer, ApiKeyRefusals refusals,
            ApiKeyFormat apiKeyFormat, IdentityValuePolicy users, IdentityValuePolicy tenants,
            VerdictListener listener, Clock clock) {
        this(evaluator, describer, refusals, apiKeyFormat, users, tenants, listener, clock, DecisionObservations.OFF);
    }

    /**
     * As above, each decision observed by {@code observations}.
     */
    public Admission(RateLimitEvaluator evaluator, IdentityDescriber describer, ApiKeyRefusals refusals,
            ApiKeyFormat apiKeyFormat, IdentityValuePolicy users, IdentityValuePolicy tenants,
            VerdictListener listener, Clock clock, DecisionObservations observations) {
        this.observations = observations;
        this.evaluator = evaluator;
        this.describer = describer;
        this.apiKeySource = describer.describe(Dimension.API_KEY);
        this.challenge = describer.challenge();
        this.refusals = refusals;
        this.apiKeyFormat = apiKeyFormat;
        this.users = users;
        this.tenants = tenants;
        this.listener = listener;
        this.clock = clock;
    }

    /**
     * Decides a request: duplicates, identity and key refusals, the tier and an unknown key's refusal, then the
     * request as the rules see it and the store's check (not yet asked: the {@link Decision#verdict()} is lazy).
     *
     * @param rules the rule set read once for this request: the tier, the identity the rules need and the decision
     * all come from it
     * @param permits the request's concurrency permits: whichever store grants one tells this object, even after the
     * request ended, so each permit is given back exactly once however the request and the store race
     */
    public Decision decide(RuleSet rules, CallerIdentity caller, AdmissionRequest request, RequestPermits permits) {
        return decide(rules, caller, request, permits, null);
    }

    /**
     * As {@link #decide(RuleSet, CallerIdentity, AdmissionRequest, RequestPermits)}, the decision observed as a child
     * of {@code parent} (when decisions are {@linkplain #observed() observed}).
     *
     * @param parent the request's own observation; null: the registry's current one, if any
     */
    public Decision decide(RuleSet rules, CallerIdentity caller, AdmissionRequest request, RequestPermits permits,
            Observation parent) {
        DecisionObservation observation = observations.start(parent);
        try {
            return decideObserved(rules, caller, request, permits, observation);
        }
        catch (RuntimeException | Error ex) {
            // nothing here throws today; if it ever does, the observation is not left started with no one holding it
            if (observation != null) {
                observation.failed(ex);
            }
            throw ex;
        }
    }

    /**
     * What a decision of a request counts, or the refusal it gets before any rule is asked.
     *
     * @param attributes the request as the rules see it; null when refused
     * @param refusal the answer instead of a decision; null when the request is decided
     */
    public record Counted(RequestAttributes attributes, RefusalAnswer refusal) {
    }

    /**
     * The request as a decision would count it (its identity in the rules' namespaces, its tier), or the refusal it
     * would get before any rule is asked; nothing is decided, spent or reported. For reading a caller's own usage
     * exactly as its requests are counted.
     */
    public Counted count(RuleSet rules, CallerIdentity caller, AdmissionRequest request) {
        RefusalAnswer refused = refuseUpFront(rules, request.rawPath(), caller);
        String tier = refused != null ? null : tier(rules, caller);
        if (refused == null) {
            refused = refuseTier(rules, tier);
        }
        if (refused != null) {
            return new Counted(null, refused);
        }
        Map<String, Object> metadata = request.routeMetadata();
        Supplier<String> clientIp = request.clientIp();
        return new Counted(new RequestAttributes(caller.qualified(Dimension.API_KEY),
                counted(Dimension.USER, caller, clientIp), counted(Dimension.TENANT, caller, clientIp),
                rules.needsClientIp() ? clientIp.get() : null, request.routeId(),
                RequestPaths.normalise(request.rawPath()), RouteMetadata.routeClass(metadata), tier,
                RouteMetadata.cost(metadata)), null);
    }

    private Decision decideObserved(RuleSet rules, CallerIdentity caller, AdmissionRequest request,
            RequestPermits permits, DecisionObservation observation) {
        Counted counted = count(rules, caller, request);
        if (counted.refusal() != null) {
            return Decision.refused(this, counted.refusal(), observation);
        }
        RequestAttributes attributes = counted.attributes();
        // Deferred, so that a failure thrown while the call is set up (an adapter's bug) is decided like one the call
        // signals, instead of escaping as a 500.
        Mono<Verdict> verdict = Mono.defer(() -> evaluator.check(rules, attributes, permits,
                        costs.of(request.http())))
                .onErrorResume(failure -> {
                    // The store adapter already falls back on store failures; reaching here is a bug, and a limiter
                    // bug must become neither an outage of the API behind it nor a way past a rule that promised to
                    // fail closed: the rules' failure modes decide, without the store.
                    failedDecisions.error("Rate-limit decision failed; deciding the request by its rules' failure "
                            + "modes", failure);
                    return Mono.just(evaluator.undecided(rules, attributes));
                });
        return Decision.checking(this, attributes, verdict, () -> evaluator.undecided(rules, attributes), observation);
    }

    /** Whether decisions are observed: a flavour looks for the request's parent observation only then. */
    public boolean observed() {
        return observations.enabled();
    }

    /**
     * The answer to a request the limiter refuses before any rule is asked, or null: a path upstreams read two ways
     * ({@link RequestPaths#isAmbiguous}) while a rule matches by path, since either reading would let the other escape
     * that rule; an identity sent twice; a missing or malformed API key; a user or tenant id (when a rule reads it)
     * malformed or unvouched where such ids are rejected.
     *
     * @param rawPath the request path as the client sent it
     */
    public RefusalAnswer refuseUpFront(RuleSet rules, String rawPath, CallerIdentity caller) {
        // The kill switch lets everything through, ambiguous and keyless requests too: it is the limiter switched
        // off, and requiring a key is the limiter's (authentication is the application's own security, which stays).
        if (rules.killSwitch()) {
            return null;
        }
        if (rules.matchesPaths() && RequestPaths.isAmbiguous(rawPath)) {
            return RefusalAnswer.ambiguousPath();
        }
        RepeatedName duplicated = caller.ambiguousFor(rules);
        if (duplicated != null) {
            return RefusalAnswer.duplicateIdentity(duplicated);
        }
        String apiKey = caller.apiKey();
        if (apiKey == null && refusals.rejectMissing()) {
            return RefusalAnswer.missingApiKey(refusals.missingStatus(), apiKeySource, challenge);
        }
        // A key a verified token gave lives in its own namespace (claim:, principal:): no client can spell it, so
        // only the length bounds it; its shape is the identity provider's (short client ids, "auth0|...", e-mails).
        String malformed = apiKey == null ? null : caller.origin(Dimension.API_KEY).fromToken()
                ? apiKeyFormat.lengthProblem(apiKey) : apiKeyFormat.problem(apiKey);
        if (malformed != null) {
            return RefusalAnswer.invalidApiKey(apiKeySource, malformed);
        }
        RefusalAnswer refused = rules.needsUser() ? users.refuse(caller.user(), caller.origin(Dimension.USER),
                "user", describer.describe(Dimension.USER)) : null;
        return refused == null && rules.needsTenant() ? tenants.refuse(caller.tenant(),
                caller.origin(Dimension.TENANT), "tenant", describer.describe(Dimension.TENANT)) : refused;
    }

    /**
     * The tier a trusted source named, when the rules know it; else the API key's, as if none were named: a typo in
     * the authentication's tier names must cost the callers their plan, never their access (and never a 5xx). A tier
     * the token names vouches for a key the token gives, never for one the client wrote beside it: such a key has its
     * own tier, listed or unknown ({@code ratelimit.api-key.unknown.policy}).
     */
    public String tier(RuleSet rules, CallerIdentity caller) {
        String apiKey = caller.qualified(Dimension.API_KEY);
        String trustedTier = caller.tier();
        warnOfTokenKeyListedAsHeaderKey(rules, caller, apiKey);
        if (trustedTier == null) {
            return rules.tierFor(apiKey);
        }
        // A tier the token names, or a tier header the authentication sets, vouches for the caller the token or
        // the authentication identified: not for a key the client wrote beside a token (unvouched), which has its
        // own tier, listed or unknown.
        boolean keyOfItsOwn = caller.origin(Dimension.API_KEY) == IdentityOrigin.UNVOUCHED
                || caller.origin(Dimension.TIER).fromToken() && caller.origin(Dimension.API_KEY).clientStated();
        if (apiKey != null && keyOfItsOwn && !rules.knows(apiKey)) {
            return rules.tierFor(apiKey);
        }
        if (!rules.knowsTier(trustedTier)) {
            unknownTiers.warn("The trusted tier source named tier '{}', which is not configured; the request is "
                    + "limited by its API key's tier instead", trustedTier);
        }
        return rules.tierFor(apiKey, trustedTier);
    }

    /**
     * A token's key that only a listing without a source prefix names was listed before keys had namespaces: that
     * listing now means a key sent in a header, which the token client is not. Said once, without the key.
     */
    private void warnOfTokenKeyListedAsHeaderKey(RuleSet rules, CallerIdentity caller, String apiKey) {
        if (apiKey != null && caller.origin(Dimension.API_KEY).fromToken() && rules.listsAnyApiKey()
                && !rules.knows(apiKey)
                && rules.knows(IdentityOrigin.REQUEST.qualify(caller.apiKey()))) {
            tokenKeysListedAsHeaderKeys.warn("A token's API key is listed only without a source prefix, which names "
                    + "a key sent in a header, so the token's client is an unknown key; list it as {}<key> in "
                    + "ratelimit.tiers.<tier>.api-keys or match.api-keys",
                    caller.origin(Dimension.API_KEY).qualify(""));
        }
    }

    /**
     * The user or tenant as the rules count it: in its source's namespace, or, when nobody vouched for it and such
     * values are counted per address, the client's address ({@code clientIp} is asked only then).
     */
    public String counted(Dimension dimension, CallerIdentity caller, Supplier<String> clientIp) {
        IdentityValuePolicy policy = dimension == Dimension.USER ? users : tenants;
        return policy.counted(dimension == Dimension.USER ? caller.user() : caller.tenant(), caller.origin(dimension),
                clientIp);
    }

    /** The answer to a key the rules do not know when they reject such keys, else null. */
    public RefusalAnswer refuseTier(RuleSet rules, String tier) {
        return RuleSet.UNKNOWN_KEYS.equals(tier) && rules.unknownApiKeys() == UnknownApiKeyPolicy.REJECT
                ? RefusalAnswer.unknownApiKey(refusals.unknownStatus(), apiKeySource, challenge) : null;
    }

    /**
     * Reports the verdict to the listeners and writes the rate-limit fields on the response; the answer to give
     * instead of forwarding the request, or null when it goes on.
     */
    public RefusalAnswer judge(RequestAttributes request, Verdict verdict, HttpHeaders responseHeaders) {
        listener.onVerdict(request, verdict);
        if (verdict.reason() == Verdict.Reason.STORE_UNAVAILABLE) {
            return RefusalAnswer.unavailable(verdict);
        }
        if (verdict.reason() == Verdict.Reason.MISSING_IDENTITY) {
            Rule rule = verdict.outcomes().get(0).rule();
            Dimension missing = RateLimitEvaluator.missingOf(rule, request);
            return RefusalAnswer.missingIdentity(rule.id(), missing == null ? "a value" : describer.describe(missing));
        }
        RateLimitHeaders.write(responseHeaders, verdict, clock.instant().getEpochSecond(), evaluator.region());
        return verdict.allowed() ? null : RefusalAnswer.rateLimited(verdict);
    }
}
