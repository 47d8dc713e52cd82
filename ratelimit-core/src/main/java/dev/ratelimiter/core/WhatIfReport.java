package dev.ratelimiter.core;

import java.time.Instant;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a {@link WhatIfReplay} found.
 *
 * @param events events replayed
 * @param matched of which the rule applied to (judged and matching, with a bucket)
 * @param refused of which it would have refused
 * @param notMatched judged, but the rule would not have applied
 * @param refusedInForce left out: refused by the rules in force, when only admitted traffic is replayed
 * @param unjudged events that lack what the rule's match or key needs, by what they lack
 * @param clientHours per client and hour (event time, UTC), most refused first
 * @param topRefused the clients with the most refusals over the whole range
 * @param costAssumed whether the rule takes the route's cost, which events do not record: each request counted 1
 */
public record WhatIfReport(long events, long matched, long refused, long notMatched, long refusedInForce,
        Map<String, Long> unjudged, List<ClientHour> clientHours, List<ClientTotal> topRefused, boolean costAssumed) {

    /** The client of requests without an API key. */
    public static final String NO_CLIENT = "(none)";

    public WhatIfReport {
        unjudged = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(unjudged));
        clientHours = List.copyOf(clientHours);
        topRefused = List.copyOf(topRefused);
    }

    /**
     * The report as JSON-ready members (numbers, strings, lists and maps), in the order the rules API and the command
     * line write them, with at most {@code maxRows} client-hour rows.
     */
    public Map<String, Object> members(int maxRows) {
        Map<String, Object> members = new LinkedHashMap<>();
        members.put("events", events);
        members.put("matched", matched);
        members.put("refused", refused);
        members.put("notMatched", notMatched);
        members.put("refusedInForce", refusedInForce);
        members.put("unjudged", unjudged);
        members.put("costAssumed", costAssumed);
        members.put("topRefused", topRefused.stream().map(client -> row(client.client(), null, client.requests(),
                client.refused())).toList());
        members.put("clientHoursTruncated", clientHours.size() > maxRows);
        members.put("clientHours", clientHours.stream().limit(maxRows)
                .map(row -> row(row.client(), row.hourStart(), row.requests(), row.refused())).toList());
        return members;
    }

    private static Map<String, Object> row(String client, Instant hour, long requests, long refused) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("client", client);
        if (hour != null) {
            row.put("hourStart", hour.toString());
        }
        row.put("requests", requests);
        row.put("refused", refused);
        return row;
    }

    /** One client's requests in one hour, and what the rule would have refused of them. */
    public record ClientHour(String client, Instant hourStart, long requests, long refused) {

        static final Comparator<ClientHour> ORDER = Comparator.comparingLong(ClientHour::refused).reversed()
                .thenComparing(ClientHour::hourStart).thenComparing(ClientHour::client);
    }

    /** One client's requests over the range, and what the rule would have refused of them. */
    public record ClientTotal(String client, long requests, long refused) {

        static final Comparator<ClientTotal> MOST_REFUSED = Comparator.comparingLong(ClientTotal::refused).reversed()
                .thenComparing(ClientTotal::client);
    }

    /** A running count. */
    static final class Counts {
        long requests;
        long refused;

        void add(boolean refusedOne) {
            requests++;
            refused += refusedOne ? 1 : 0;
        }

        void add(Counts other) {
            requests += other.requests;
            refused += other.refused;
        }
    }
}
