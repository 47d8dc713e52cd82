package dev.ratelimiter.core;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What a proposed rule would have refused of recorded traffic: each {@link DecisionEvent}, in time order, is offered
 * to the rule's buckets as the store's script would have been asked, with the same arithmetic ({@link BucketState}),
 * at the event's time.
 *
 * <p>By default every arrival is replayed, whatever the rules in force decided of it ({@link Traffic#ARRIVALS}): the
 * question is what the proposed rule would have refused of the traffic that came, not of the traffic that got through.
 * {@link Traffic#ADMITTED} replays only what the rules in force let through, which is what shadow mode sees: the
 * script charges no bucket of a request an enforced rule refused. The rule is judged alone, as if
 * it applied wherever it matches (a more specific rule of its group is not looked for). An event that lacks what the
 * rule's match or key needs (events carry no path, user, tenant or client address) is counted as not judged, by the
 * reason, never guessed at.
 */
public final class WhatIfReplay {

    /** Which recorded requests the proposed rule is offered. */
    public enum Traffic {
        /** Every request that arrived. */
        ARRIVALS,
        /** Only requests the rules in force let through ({@code allowed}, {@code shadow_denied}): as shadow mode. */
        ADMITTED
    }

    private final Rule rule;
    private final Traffic traffic;
    private final String scheme;
    private final Set<String> clientIds;
    private final Map<String, BucketState> buckets = new HashMap<>();
    private final Map<String, Map<Instant, WhatIfReport.Counts>> byClientHour = new HashMap<>();
    private final Map<String, Long> unjudged = new TreeMap<>();
    private long events;
    private long notMatched;
    private long refusedInForce;
    private Instant last = Instant.MIN;

    /**
     * @param rule the proposed rule
     * @param keyring the client-id hash the events were written under (their {@code client} field), to match the
     * rule's API keys against
     */
    public WhatIfReplay(Rule rule, ClientIdKeyring keyring) {
        this(rule, keyring, Traffic.ARRIVALS);
    }

    /** A replay of {@code traffic} only. */
    public WhatIfReplay(Rule rule, ClientIdKeyring keyring, Traffic traffic) {
        if (rule.limit().capsInProgress()) {
            throw new InvalidLimitException("limit.algorithm", "rule '" + rule.id() + "' caps requests in progress; "
                    + "decision events do not record when a request ended, so it cannot be replayed.");
        }
        this.rule = rule;
        this.traffic = traffic;
        this.scheme = keyring.current().scheme();
        this.clientIds = rule.match().apiKeys().stream().map(keyring::hashed)
                .filter(hashed -> hashed != null && hashed.scheme().equals(scheme)).map(HashedApiKey::clientId)
                .collect(Collectors.toUnmodifiableSet());
    }

    /** Offers one event to the rule; events must come in time order (one bucket may span clients and partitions). */
    public void replay(DecisionEvent event) {
        if (event.time().isBefore(last)) {
            throw new IllegalArgumentException("events must be replayed in time order: " + event.time()
                    + " came after " + last);
        }
        last = event.time();
        events++;
        if (traffic == Traffic.ADMITTED && event.verdict() != DecisionEvent.Verdict.ALLOWED
                && event.verdict() != DecisionEvent.Verdict.SHADOW_DENIED) {
            refusedInForce++;
            return;
        }
        String notJudged = notJudged(event);
        if (notJudged != null) {
            unjudged.merge(notJudged, 1L, Long::sum);
            return;
        }
        if (!matches(event)) {
            notMatched++;
            return;
        }
        String bucketKey = bucketKey(event);
        boolean refused;
        if (bucketKey != null) {
            refused = !spend(bucketKey, event.time(), limitFor(event));
        }
        else if (rule.whenMissing() == WhenMissing.DENY) {
            refused = true;
        }
        else {
            notMatched++;
            return;
        }
        byClientHour.computeIfAbsent(event.client() != null ? event.client() : WhatIfReport.NO_CLIENT,
                client -> new HashMap<>())
                .computeIfAbsent(event.time().truncatedTo(ChronoUnit.HOURS), hour -> new WhatIfReport.Counts())
                .add(refused);
    }

    /**
     * The rule's limit as the evaluator would have applied it to the event's client: lowered by the abuse factor the
     * event records (in hundredths, as {@link AbuseScaling}), for a rule per API key, as in shadow mode.
     */
    private Limit limitFor(DecisionEvent event) {
        Double factor = event.abuseFactor();
        if (factor == null || factor >= 1 || !rule.key().contains(Dimension.API_KEY)) {
            return rule.limit();
        }
        int hundredths = AbuseScaling.hundredths(factor);
        if (hundredths >= 100) {
            return rule.limit();
        }
        Limit lowered = AbuseScaling.lowered(rule.limit(), hundredths / 100.0);
        int cost = rule.cost() > 0 ? rule.cost() : 1;
        return cost > lowered.quota() ? AbuseScaling.lowered(rule.limit(), (double) cost / rule.limit().quota())
                : lowered;
    }

    /** Whether the bucket admits one request at {@code time} under {@code limit}, spending its cost if it does. */
    private boolean spend(String bucketKey, Instant time, Limit limit) {
        long now = time.getEpochSecond() * 1_000_000_000L + time.getNano();
        BucketState bucket = buckets.computeIfAbsent(bucketKey, key -> BucketState.create(limit, now));
        BucketState.Preview preview = bucket.preview(limit, rule.cost() > 0 ? rule.cost() : 1, now);
        if (preview.allowed()) {
            bucket.commit(preview);
        }
        return preview.allowed();
    }

    /** What the replay found so far, with the {@code top} clients by refusals. */
    public WhatIfReport report(int top) {
        List<WhatIfReport.ClientHour> rows = new ArrayList<>();
        Map<String, WhatIfReport.Counts> byClient = new HashMap<>();
        byClientHour.forEach((client, hours) -> hours.forEach((hour, counts) -> {
            rows.add(new WhatIfReport.ClientHour(client, hour, counts.requests, counts.refused));
            byClient.computeIfAbsent(client, c -> new WhatIfReport.Counts()).add(counts);
        }));
        rows.sort(WhatIfReport.ClientHour.ORDER);
        List<WhatIfReport.ClientTotal> topRefused = byClient.entrySet().stream()
                .filter(entry -> entry.getValue().refused > 0)
                .map(entry -> new WhatIfReport.ClientTotal(entry.getKey(), entry.getValue().requests,
                        entry.getValue().refused))
                .sorted(WhatIfReport.ClientTotal.MOST_REFUSED).limit(top).toList();
        long matched = rows.stream().mapToLong(WhatIfReport.ClientHour::requests).sum();
        long refused = rows.stream().mapToLong(WhatIfReport.ClientHour::refused).sum();
        return new WhatIfReport(events, matched, refused, notMatched, refusedInForce, new LinkedHashMap<>(unjudged),
                rows, topRefused, rule.cost() == 0);
    }

    /** Why the event cannot be judged against the rule, or null when it can. */
    private String notJudged(DecisionEvent event) {
        Match match = rule.match();
        if (!match.paths().isEmpty()) {
            return "path";
        }
        if (!match.routeIds().isEmpty() && event.route() == null) {
            return "route";
        }
        if (!match.routeClasses().isEmpty() && event.routeClass() == null) {
            return "route-class";
        }
        if (!match.tiers().isEmpty() && event.tier() == null) {
            return "tier";
        }
        for (Dimension dimension : rule.key()) {
            switch (dimension) {
                case USER, TENANT, CLIENT_IP -> {
                    return dimension.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
                }
                default -> {
                }
            }
        }
        return null;
    }

    private boolean matches(DecisionEvent event) {
        Match match = rule.match();
        return (match.routeIds().isEmpty() || match.routeIds().contains(event.route()))
                && (match.routeClasses().isEmpty() || match.routeClasses().contains(event.routeClass()))
                && (match.tiers().isEmpty() || match.tiers().contains(event.tier()))
                && (match.apiKeys().isEmpty() || event.client() != null && clientIds.contains(event.client()));
    }

    /**
     * The event's bucket: its values of the rule's key, and its region where each region holds the whole limit; null
     * when it lacks a value and the rule does not share one bucket between such requests.
     */
    private String bucketKey(DecisionEvent event) {
        StringBuilder key = new StringBuilder();
        for (Dimension dimension : rule.key()) {
            String value = switch (dimension) {
                case API_KEY -> event.client();
                case ROUTE -> event.route();
                case ROUTE_CLASS -> event.routeClass();
                case TIER -> event.tier();
                case USER, TENANT, CLIENT_IP -> throw new IllegalStateException("not judged: " + dimension);
            };
            if (value == null && rule.whenMissing() != WhenMissing.SHARED) {
                return null;
            }
            key.append(value == null ? "\u0000" : value).append('\u0001');
        }
        if (rule.scope() == Scope.REGIONAL && event.region() != null) {
            key.append(event.region());
        }
        return key.toString();
    }
}
