package dev.ratelimiter.autoconfigure.rules;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import dev.ratelimiter.core.AbuseScore;
import dev.ratelimiter.core.AbuseScores;
import dev.ratelimiter.kafka.AbuseScoreJson;
import dev.ratelimiter.kafka.AbuseScorePublisher;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;

/**
 * Operators' abuse scores through the rules API ({@code <rules path>/_abuse-scores/{client}}), for either web stack
 * to serve: read with the viewer role, set and removed with the admin role, as rules are. With the score topic, a
 * score is published there (every instance applies it) and applied here at once; without it, here only.
 *
 * <p>Below the rules' own path, where no rule id can be (ids start with a letter or a digit), so that the filter
 * and the roles that guard the rules guard it too, on the same port.
 */
public final class AbuseScoreOperations {

    /** Path segment below the rules API's mount. */
    public static final String SEGMENT = "/_abuse-scores";

    /** Client ids as decision events name them (a hash in base64url), with room for a keyring's scheme. */
    private static final String CLIENT_ID = "[A-Za-z0-9_.:-]{1,128}";

    /** Scores listed at most: the list is for a person to read. */
    static final int MAX_LISTED = 1_000;

    private final RulesApiOperations rules;
    private final AbuseScores scores;
    private final @Nullable AbuseScorePublisher publisher;
    private final Clock clock;

    public AbuseScoreOperations(RulesApiOperations rules, AbuseScores scores, @Nullable AbuseScorePublisher publisher,
            Clock clock) {
        this.rules = rules;
        this.scores = scores;
        this.publisher = publisher;
        this.clock = clock;
    }

    public RulesApiMount mount() {
        return rules.mount();
    }

    public RulesApiOperations.@Nullable Answer list(Principal caller, String instance) {
        return rules.as(caller, false, instance, () -> {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("minFactor", scores.settings().minFactor());
            body.put("halfLife", scores.settings().halfLife().toString());
            body.put("scaledClients", scores.scaledClients());
            body.put("scores", scores.views(MAX_LISTED).stream().map(AbuseScoreOperations::json).toList());
            return ok(body);
        });
    }

    public RulesApiOperations.@Nullable Answer get(Principal caller, String client, String instance) {
        return rules.as(caller, false, instance, () -> {
            checkClient(client);
            AbuseScores.View view = scores.viewOf(client);
            return ok(view != null ? json(view) : Map.of("client", client, "factor", 1.0));
        });
    }

    public RulesApiOperations.@Nullable Answer put(Principal caller, String client, HttpHeaders headers,
            Supplier<byte[]> body, String instance) {
        return rules.as(caller, true, instance, () -> {
            checkClient(client);
            RuleDocumentReader.checkType(headers);
            AbuseScore score;
            try {
                score = AbuseScoreJson.read(new String(body.get(), StandardCharsets.UTF_8), clock.instant());
            }
            catch (IllegalArgumentException ex) {
                throw new RuleApiRefusal(HttpStatus.BAD_REQUEST, "invalid_abuse_score", null, "The abuse score is "
                        + "not usable: " + ex.getMessage() + ". Send {\"score\": 0..1} or {\"factor\": 0..1}, with "
                        + "optional \"source\", \"expires\" (epoch ms or ISO-8601).");
            }
            score = new AbuseScore(score.score(), score.factor(), sourceOf(score, caller), score.at(),
                    score.expires());
            publish(client, score);
            scores.apply(client, score);
            AbuseScores.View view = scores.viewOf(client);
            return ok(view != null ? json(view) : Map.of("client", client, "factor", 1.0));
        });
    }

    public RulesApiOperations.@Nullable Answer delete(Principal caller, String client, String instance) {
        return rules.as(caller, true, instance, () -> {
            checkClient(client);
            publish(client, null);
            scores.remove(client);
            return new RulesApiOperations.Answer(HttpStatus.NO_CONTENT, new HttpHeaders(), null);
        });
    }

    private void publish(String client, @Nullable AbuseScore score) {
        if (publisher == null) {
            return;
        }
        try {
            publisher.publish(client, score);
        }
        catch (IllegalStateException ex) {
            throw new RuleApiRefusal(HttpStatus.SERVICE_UNAVAILABLE, "score_not_published", null, "The score could "
                    + "not be published to the abuse-score topic, so other instances would not apply it; nothing "
                    + "was changed. " + ex.getMessage());
        }
    }

    /** Who set it, for the operator reading it later: the caller's name beside the source it gave. */
    private static String sourceOf(AbuseScore score, Principal caller) {
        String given = "unknown".equals(score.source()) ? "operator" : score.source();
        String name = caller == RulesApiOperations.anonymous() ? null : caller.getName();
        return name == null ? given : given + " (" + name + ")";
    }

    private static void checkClient(String client) {
        if (!client.matches(CLIENT_ID)) {
            throw new RuleApiRefusal(HttpStatus.BAD_REQUEST, "invalid_client", null, "'" + abbreviated(client)
                    + "' is no client id: give the id decision events name the client by (letters, digits, '_', "
                    + "'-', at most 128), not its API key.");
        }
    }

    private static String abbreviated(String text) {
        return text.length() > 64 ? text.substring(0, 64) + "…" : text;
    }

    private static Map<String, Object> json(AbuseScores.View view) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("client", view.client());
        if (view.score() != null) {
            json.put("score", view.score());
        }
        json.put("factor", view.factor());
        json.put("source", view.source());
        json.put("at", view.at().toString());
        if (view.expires() != null) {
            json.put("expires", view.expires().toString());
        }
        return json;
    }

    private static RulesApiOperations.Answer ok(Object body) {
        HttpHeaders headers = new HttpHeaders();
        headers.setContentType(MediaType.APPLICATION_JSON);
        headers.setCacheControl("no-store");
        return new RulesApiOperations.Answer(HttpStatus.OK, headers, body);
    }
}
