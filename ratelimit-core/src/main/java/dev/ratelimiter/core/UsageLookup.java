package dev.ratelimiter.core;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;

import reactor.core.publisher.Mono;

/**
 * A client's usage of every rule that applies to it, read without spending ({@link UsageReader}): the usage API's
 * core, for an operator asking about any client and for a client asking about itself.
 *
 * <p>Which rules apply is decided as for a request with the query's values ({@link RuleSet#applicableTo}): in each
 * group the most specific rule that matches them. A rule is read only when the query gives every value its buckets are
 * keyed on (a rule per user needs {@code user}); a rule whose match depends on a route, path or route class the query
 * does not give is skipped, and listed with what it needs, as is a keyed rule missing a value. The buckets are named
 * exactly as the request path names them ({@link RateLimitEvaluator#bucketOf}), with the same client ids, so the
 * reading is the bucket the client's next request would spend from; a global rule is read as this region's share, a
 * sharded rule as the caller's shard.
 */
public final class UsageLookup {

    private final Supplier<RuleSet> rules;
    private final ClientIds clientIds;
    private final RegionShares regions;
    private final UsageReader reader;
    private final Clock clock;
    private final AbuseScores abuse;
    private final AbuseScaling abuseScaling = new AbuseScaling();

    /**
     * @param clientIds the hash that names buckets: the evaluator's
     * @param regions this region's shares of global rules, or null (one region, every limit whole)
     */
    public UsageLookup(Supplier<RuleSet> rules, ClientIds clientIds, RegionShares regions, UsageReader reader,
            Clock clock) {
        this(rules, clientIds, regions, null, reader, clock);
    }

    /**
     * @param abuse the clients' abuse scores, which lower their limits as the evaluator lowers them; null: none
     */
    public UsageLookup(Supplier<RuleSet> rules, ClientIds clientIds, RegionShares regions, AbuseScores abuse,
            UsageReader reader, Clock clock) {
        this.rules = rules;
        this.clientIds = clientIds;
        this.regions = regions;
        this.abuse = abuse;
        this.reader = reader;
        this.clock = clock;
    }

    /**
     * The usage the query asks for. Fails with {@link UsageQueryException} ({@code UNKNOWN_RULE}) when it names a rule
     * that does not exist; otherwise with whatever the reader fails with (the store cannot be reached).
     */
    public Mono<Usage> read(UsageQuery query) {
        RuleSet ruleSet = rules.get();
        if (query.ruleId() != null && !ruleSet.rules().containsKey(query.ruleId())) {
            return Mono.error(unknownRule(query.ruleId()));
        }
        String tier = tierOf(ruleSet, query);
        // "" rather than null: a rule matching route ids or route classes matches no request lacking them, and
        // whether the query gave them is asked of the query, not of these attributes.
        // A client named by its id stands in for its key: rules per API key then count it as given (the buckets
        // are named from the id itself, and overrides and tiers are found by it, never by this stand-in).
        String apiKey = query.apiKey() != null ? query.apiKey() : query.clientId();
        RequestAttributes request = new RequestAttributes(apiKey, query.user(), query.tenant(),
                query.clientIp(), orEmpty(query.route()), query.path(), orEmpty(query.routeClass()), tier, 1);
        List<Rule> applicable = query.clientId() != null
                ? ruleSet.applicableToClient(request, clientIds, query.clientId())
                : ruleSet.applicableTo(request);
        if (query.ruleId() != null && !ruleSet.rules().get(query.ruleId()).match().apiKeys().isEmpty()
                && applicable.stream().noneMatch(rule -> rule.id().equals(query.ruleId()))) {
            // another customer's override: answered as a rule that does not exist, or asking for it by id would tell
            // which customers have one
            return Mono.error(unknownRule(query.ruleId()));
        }
        // The client's abuse factor, as the evaluator finds it: by the client id of its API key.
        String client = query.clientId() != null ? query.clientId()
                : query.apiKey() != null ? clientIds.of(query.apiKey()) : null;
        AbuseScores.View abuseView = abuse == null || client == null ? null : abuse.viewOf(client);
        double abuseFactor = abuseView == null ? 1 : abuseView.factor();
        List<Rule> read = new ArrayList<>();
        List<UsageProbe> probes = new ArrayList<>();
        List<Usage.Skipped> skipped = new ArrayList<>();
        for (Rule rule : applicable) {
            if (query.ruleId() != null && !query.ruleId().equals(rule.id())) {
                continue;
            }
            String missing = missingKeyValue(rule, query);
            if (missing != null) {
                skipped.add(new Usage.Skipped(rule, missing));
                continue;
            }
            if (rule.shards() > 1 && query.apiKey() == null && query.clientId() != null) {
                skipped.add(new Usage.Skipped(rule, "split into " + rule.shards() + " shards by the caller's API key "
                        + "as sent; give apiKey rather than client"));
                continue;
            }
            read.add(rule);
            UsageProbe probe = probeOf(rule, request, query);
            if (abuseFactor < 1 && abuse.scales(rule, tier)) {
                // After the region's share and the shard's split, as the evaluator scales them (one request's cost).
                probe = new UsageProbe(abuseScaling.scaled(probe.rule(), abuseFactor, 1), probe.bucket());
            }
            probes.add(probe);
        }
        Set<String> seen = new HashSet<>();
        applicable.forEach(rule -> seen.add(rule.id()));
        for (Rule rule : ruleSet.rules().values()) {
            if (!seen.contains(rule.id()) && (query.ruleId() == null || query.ruleId().equals(rule.id()))) {
                String reason = dependsOnMissing(rule, query, tier);
                if (reason != null) {
                    skipped.add(new Usage.Skipped(rule, reason));
                }
            }
        }
        boolean tierEnforced = ruleSet.enforced(tier);
        if (probes.isEmpty()) {
            return Mono.just(new Usage(tier, ruleSet.killSwitch(), List.of(), skipped, abuseView));
        }
        return reader.read(probes).map(readings -> {
            List<Usage.RuleUsage> usages = new ArrayList<>(readings.size());
            for (int i = 0; i < probes.size(); i++) {
                Rule rule = read.get(i);
                UsageProbe probe = probes.get(i);
                BucketReading reading = readings.get(i);
                usages.add(new Usage.RuleUsage(rule, probe.rule().limit(),
                        rule.mode() == Mode.SHADOW || !tierEnforced, reading,
                        clock.instant().plus(reading.resetAfter()), probe.local(), sharedByClients(rule)));
            }
            return new Usage(tier, ruleSet.killSwitch(), usages, skipped, abuseView);
        });
    }

    private static UsageQueryException unknownRule(String ruleId) {
        return new UsageQueryException(UsageQueryException.Kind.UNKNOWN_RULE, "rule",
                "There is no rule '" + ruleId + "'.");
    }

    private String tierOf(RuleSet ruleSet, UsageQuery query) {
        if (query.tier() != null) {
            return query.tier();
        }
        if (query.apiKey() != null) {
            return ruleSet.tierFor(query.apiKey());
        }
        if (query.clientId() != null) {
            return ruleSet.tierForClient(clientIds, query.clientId());
        }
        return ruleSet.defaultTier();
    }

    /** The bucket the client's requests spend from under this rule, and the limit it holds here. */
    private UsageProbe probeOf(Rule rule, RequestAttributes request, UsageQuery query) {
        String client = !rule.key().contains(Dimension.API_KEY) ? null
                : query.clientId() != null ? query.clientId() : clientIds.of(query.apiKey());
        BucketKey bucket = RateLimitEvaluator.bucketOf(clientIds, rule, request, client);
        if (rule.shards() > 1) {
            return new UsageProbe(rule.withLimit(RateLimitEvaluator.shardLimit(rule,
                    RateLimitEvaluator.shardIndex(rule, request, bucket))),
                    RateLimitEvaluator.shardOf(clientIds, rule, request, bucket));
        }
        if (rule.scope() == Scope.GLOBAL && regions != null) {
            return new UsageProbe(regions.ruleFor(rule, bucket), bucket);
        }
        return new UsageProbe(rule, bucket);
    }

    /** What the query lacks of the rule's key, as the reason to skip it; null when it has everything. */
    private static String missingKeyValue(Rule rule, UsageQuery query) {
        for (Dimension dimension : rule.key()) {
            String parameter = switch (dimension) {
                case API_KEY -> query.hasClient() ? null : "apiKey or client";
                case USER -> query.user() != null ? null : "user";
                case TENANT -> query.tenant() != null ? null : "tenant";
                case CLIENT_IP -> query.clientIp() != null ? null : "ip";
                case ROUTE -> query.route() != null ? null : "route";
                case ROUTE_CLASS -> query.routeClass() != null ? null : "routeClass";
                case TIER -> null; // always known: given, or the client's
            };
            if (parameter != null) {
                return "its buckets are per " + dimension.name().toLowerCase(Locale.ROOT).replace('_', '-')
                        + "; give " + parameter;
            }
        }
        return null;
    }

    /**
     * Why a rule that did not apply might apply to the client's requests on a route, path or route class the query did
     * not give; null when it does not depend on one (it does not apply to this client, or another rule of its group
     * wins). Customer overrides for other clients are never named.
     */
    private static String dependsOnMissing(Rule rule, UsageQuery query, String tier) {
        Match match = rule.match();
        if (!match.apiKeys().isEmpty() || !match.tiers().isEmpty() && !match.tiers().contains(tier)) {
            return null;
        }
        List<String> needs = new ArrayList<>();
        if (!match.routeIds().isEmpty() && query.route() == null) {
            needs.add("route");
        }
        if (!match.paths().isEmpty() && query.path() == null) {
            needs.add("path");
        }
        if (!match.routeClasses().isEmpty() && query.routeClass() == null) {
            needs.add("routeClass");
        }
        return needs.isEmpty() ? null : "it matches requests by " + String.join(", ", needs) + "; give "
                + String.join(" and ", needs) + " to read it";
    }

    /** Whether no value of the rule's key names a client: one bucket for everybody on a route, say. */
    private static boolean sharedByClients(Rule rule) {
        return !rule.key().contains(Dimension.API_KEY) && !rule.key().contains(Dimension.USER)
                && !rule.key().contains(Dimension.TENANT) && !rule.key().contains(Dimension.CLIENT_IP);
    }

    private static String orEmpty(String value) {
        return value == null ? "" : value;
    }
}
