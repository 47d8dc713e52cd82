package dev.ratelimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The abuse scores of clients and the factor each one scales that client's limits by: never above 1 (a score cannot
 * raise a limit), never below {@link Settings#minFactor()}, and returning toward 1 without new scores — the lowering
 * ({@code 1 − factor}) halves every {@link Settings#halfLife()} since the score was published.
 *
 * <p>A score maps to a factor linearly: {@code factor = 1 − score × (1 − minFactor)}, so score 0 leaves the limit
 * whole and score 1 holds it at the floor. A record may name its factor instead; it is bounded the same way.
 *
 * <p>Read on the request path ({@link #factorFor}: one map look-up, no lock); written by the score topic's consumer and
 * the rules API under a lock. At most {@link Settings#maxClients()} clients are held; past it the one whose score
 * arrived longest ago is forgotten (its limits are whole again: forgetting can only raise a limit back to what is
 * configured, never above).
 */
public final class AbuseScores {

    /** A lowering smaller than this is no lowering: the client is forgotten, its limits whole. */
    static final double NEGLIGIBLE = 0.005;

    /**
     * How the scores apply.
     *
     * @param minFactor the lowest factor any score can bring a limit to (0 &lt; minFactor ≤ 1)
     * @param halfLife how long it takes a lowering to halve without a new score
     * @param maxClients how many clients' scores are held at most
     * @param exemptRules ids of rules no score scales
     * @param exemptTiers tiers whose clients no score scales
     */
    public record Settings(double minFactor, Duration halfLife, int maxClients, Set<String> exemptRules,
            Set<String> exemptTiers) {

        public Settings {
            if (!(minFactor > 0 && minFactor <= 1)) {
                throw new InvalidLimitException("ratelimit.abuse.min-factor", "ratelimit.abuse.min-factor must be "
                        + "above 0 and at most 1 (the share of a limit an abusive client keeps), but was " + minFactor
                        + ".");
            }
            if (halfLife == null || halfLife.toMillis() < 1) {
                throw new InvalidLimitException("ratelimit.abuse.half-life", "ratelimit.abuse.half-life must be a "
                        + "duration of at least 1ms (for example 10m), but was " + halfLife + ".");
            }
            if (maxClients < 1) {
                throw new InvalidLimitException("ratelimit.abuse.max-clients", "ratelimit.abuse.max-clients must be "
                        + "at least 1, but was " + maxClients + ".");
            }
            exemptRules = exemptRules == null ? Set.of() : Set.copyOf(exemptRules);
            exemptTiers = exemptTiers == null ? Set.of() : Set.copyOf(exemptTiers);
        }
    }

    /**
     * A client's score as operators and the usage API see it.
     *
     * @param client the client id ({@link ClientIds#of} of its API key)
     * @param score the published score, or null when a factor was published
     * @param factor the factor in force now, decay included
     * @param source who published it
     * @param at when
     * @param expires when it stops applying, or null
     */
    public record View(String client, Double score, double factor, String source, Instant at, Instant expires) {
    }

    private record Entry(AbuseScore score, double initialFactor) {
    }

    private final Settings settings;
    private final Clock clock;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    /** Clients in the order their scores arrived, eldest first: the eviction order. Guarded by itself. */
    private final LinkedHashMap<String, Boolean> arrival = new LinkedHashMap<>();

    public AbuseScores(Settings settings, Clock clock) {
        this.settings = settings;
        this.clock = clock;
    }

    public Settings settings() {
        return settings;
    }

    /** The factor a score maps to, before any decay. */
    public double factorOf(AbuseScore score) {
        double raw = score.factor() != null ? score.factor() : 1 - score.score() * (1 - settings.minFactor);
        return Math.max(settings.minFactor, Math.min(1, raw));
    }

    /**
     * Puts a client's score in force, replacing the one before. A score published in the future (another clock) is
     * taken as published now, so that it cannot hold its lowering longer than the half-life says.
     */
    public void apply(String client, AbuseScore score) {
        if (client == null || client.isEmpty() || client.length() > 128) {
            throw new IllegalArgumentException("not a client id");
        }
        Instant now = clock.instant();
        if (score.at().isAfter(now)) {
            score = new AbuseScore(score.score(), score.factor(), score.source(), now, score.expires());
        }
        Entry entry = new Entry(score, factorOf(score));
        synchronized (arrival) {
            arrival.remove(client);
            if (decayed(entry, now) >= 1) {
                entries.remove(client); // nothing left to lower: an old record read back, or a score of 0
                return;
            }
            entries.put(client, entry);
            arrival.put(client, Boolean.TRUE);
            Iterator<String> eldest = arrival.keySet().iterator();
            while (arrival.size() > settings.maxClients) {
                entries.remove(eldest.next());
                eldest.remove();
            }
        }
    }

    /** Forgets a client's score (a tombstone, an operator's delete): its limits are whole again. */
    public void remove(String client) {
        synchronized (arrival) {
            arrival.remove(client);
            entries.remove(client);
        }
    }

    /** The factor the client's limits are scaled by now: 1 for a client without a score in force. */
    public double factorFor(String client) {
        if (client == null || entries.isEmpty()) {
            return 1;
        }
        Entry entry = entries.get(client);
        return entry == null ? 1 : decayed(entry, clock.instant());
    }

    /** The client's score for operators and the usage API, or null when none is in force. */
    public View viewOf(String client) {
        Entry entry = client == null ? null : entries.get(client);
        if (entry == null) {
            return null;
        }
        double factor = decayed(entry, clock.instant());
        if (factor >= 1) {
            return null;
        }
        AbuseScore score = entry.score();
        return new View(client, score.score(), factor, score.source(), score.at(), score.expires());
    }

    /** Up to {@code max} of the scores in force, newest first. */
    public List<View> views(int max) {
        List<String> clients;
        synchronized (arrival) {
            clients = new ArrayList<>(arrival.keySet());
        }
        List<View> views = new ArrayList<>();
        for (int i = clients.size() - 1; i >= 0 && views.size() < max; i--) {
            View view = viewOf(clients.get(i));
            if (view != null) {
                views.add(view);
            }
        }
        return views;
    }

    /** How many clients have their limits lowered right now (a meter; counts without allocating views). */
    public int scaledClients() {
        Instant now = clock.instant();
        int scaled = 0;
        for (Entry entry : entries.values()) {
            if (decayed(entry, now) < 1) {
                scaled++;
            }
        }
        return scaled;
    }

    /** Clients held (scaled or decayed but not yet forgotten). */
    public int held() {
        return entries.size();
    }

    /**
     * Whether a score scales this rule for a client of this tier: rules per API key (the client a score names),
     * rate limits (a concurrency cap is about the upstream's capacity, not the client's conduct), not exempt.
     */
    public boolean scales(Rule rule, String tier) {
        return rule.key().contains(Dimension.API_KEY) && !rule.limit().capsInProgress()
                && !settings.exemptRules.contains(rule.id()) && (tier == null || !settings.exemptTiers.contains(tier));
    }

    private double decayed(Entry entry, Instant now) {
        AbuseScore score = entry.score();
        if (score.expires() != null && !now.isBefore(score.expires())) {
            return 1;
        }
        // in double: toMillis() overflows for a record stamped ~292 million years away, which a topic may carry
        Duration since = Duration.between(score.at(), now);
        double elapsed = Math.max(0, since.getSeconds() * 1_000.0 + since.getNano() / 1_000_000.0);
        double lowering = (1 - entry.initialFactor()) * Math.pow(0.5, elapsed / settings.halfLife.toMillis());
        // Never below the floor: 1 - (1 - 0.1) is 0.09999999999999998 in doubles.
        return lowering < NEGLIGIBLE ? 1 : Math.max(settings.minFactor, 1 - lowering);
    }
}
