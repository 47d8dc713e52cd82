package dev.ratelimiter.gateway;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * The customizers' typed view of a refusal's body, {@link Refusal#getProblemDetail()}: what it holds, how a change to
 * it is written, and how it and the deprecated map view ({@link Refusal#getBody()}) meet when customizers use both.
 */
class RefusalProblemDetailTest {

    private static final RefusalAnswer MISSING_KEY = RefusalAnswer.missingApiKey(HttpStatus.UNAUTHORIZED,
            "the X-API-Key header", "ApiKey header=\"X-API-Key\"");
    private static final String MISSING_KEY_BODY = RefusalCatalogue.all().stream()
            .filter(pinned -> pinned.name().equals("missing API key, 401")).findFirst().orElseThrow().body();

    static List<RefusalCatalogue.Pinned> answers() {
        return RefusalCatalogue.all();
    }

    @ParameterizedTest
    @MethodSource("answers")
    void theProblemDetailOfEveryAnswerIsWrittenAsItsPinnedText(RefusalCatalogue.Pinned pinned) {
        assertThat(ProblemMembers.json(pinned.answer().problemDetail())).isEqualTo(pinned.body());
    }

    @Test
    void theTypedViewHoldsTheDefaultMembersAsTheirTypes() {
        RefusalAnswer limited = RefusalCatalogue.all().get(1).answer();

        ProblemDetail problem = limited.problemDetail();

        assertThat(problem.getType()).isEqualTo(URI.create(RefusalRenderer.QUOTA_EXCEEDED));
        assertThat(problem.getTitle()).isEqualTo("Too Many Requests");
        assertThat(problem.getStatus()).isEqualTo(429);
        assertThat(problem.getDetail()).isEqualTo("Rate limit 'burst' exceeded; retry after 90 seconds.");
        assertThat(problem.getInstance()).isNull();
        assertThat(problem.getProperties()).containsExactly(entry("error", "rate_limited"), entry("retryAfter", 90L),
                entry("policy", "burst"), entry(RefusalRenderer.VIOLATED_POLICIES, List.of("burst", "hourly")));
    }

    @Test
    void aChangedProblemIsWrittenInTheMembersOrderItsNewPropertiesLast() {
        String body = customized((refusal, context) -> {
            ProblemDetail problem = refusal.getProblemDetail();
            problem.setProperty("support", "https://example.com/keys");
            problem.setInstance(URI.create("urn:request:42"));
            problem.setDetail(problem.getDetail() + " Ask for one at https://example.com/keys.");
            problem.setType(URI.create("https://example.com/problems/no-key"));
        });

        assertThat(body).isEqualTo("{\"type\":\"https://example.com/problems/no-key\",\"title\":\"Unauthorized\","
                + "\"status\":401,\"detail\":\"This API requires an API key in the X-API-Key header. Ask for one at "
                + "https://example.com/keys.\",\"instance\":\"urn:request:42\",\"error\":\"missing_api_key\","
                + "\"support\":\"https://example.com/keys\"}");
    }

    @Test
    void theProblemsStatusFollowsTheAnswersUnlessACustomizerSetItToo() {
        String followed = customized((refusal, context) -> refusal.setStatus(HttpStatus.FORBIDDEN));
        String setBoth = customized((refusal, context) -> {
            refusal.setStatus(HttpStatus.FORBIDDEN);
            refusal.getProblemDetail().setStatus(418);
        });

        assertThat(followed).isEqualTo(MISSING_KEY_BODY.replace("\"status\":401", "\"status\":403"));
        assertThat(setBoth).isEqualTo(MISSING_KEY_BODY.replace("\"status\":401", "\"status\":418"));
    }

    @Test
    void aBodyChangedAsAMapIsWrittenMemberForMemberAsBefore() {
        @SuppressWarnings("deprecation")
        String body = customized((refusal, context) -> {
            Map<String, Object> members = refusal.getBody();
            assertThat(members).containsEntry("type", "about:blank").containsEntry("status", 401);
            members.remove("type");
            members.put("type", "urn:moved-last");
        });

        assertThat(body).isEqualTo(MISSING_KEY_BODY.replace("{\"type\":\"about:blank\",", "{")
                .replace("}", ",\"type\":\"urn:moved-last\"}"));
    }

    @Test
    @SuppressWarnings("deprecation")
    void aMapCustomizerThenATypedOneSeeOneBodyWrittenInTheProblemsOrder() {
        String body = customized((refusal, context) -> {
            refusal.getBody().put("plan", "free");
            refusal.getBody().remove("detail");
        }, (refusal, context) -> {
            ProblemDetail problem = refusal.getProblemDetail();
            assertThat(problem.getDetail()).isNull();
            problem.setProperty("seen", problem.getProperties().get("plan"));
        }, (refusal, context) -> refusal.getBody().put("last", true));

        assertThat(body).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Unauthorized\",\"status\":401,"
                + "\"error\":\"missing_api_key\",\"plan\":\"free\",\"seen\":\"free\",\"last\":true}");
    }

    @Test
    @SuppressWarnings("deprecation")
    void aMapMemberTheTypedViewCannotHoldFailsToTheDefaultRefusal() {
        for (Object status : List.of("401", 401.5, Map.of())) {
            String body = customized((refusal, context) -> refusal.getBody().put("status", status),
                    (refusal, context) -> refusal.getProblemDetail().setProperty("never", "written"));
            assertThat(body).as(String.valueOf(status)).isEqualTo(MISSING_KEY_BODY);
        }
        String badType = customized((refusal, context) -> refusal.getBody().put("type", "not a uri"),
                (refusal, context) -> refusal.getProblemDetail());
        assertThat(badType).isEqualTo(MISSING_KEY_BODY);
    }

    private static String customized(RateLimitResponseCustomizer... customizers) {
        RefusalRenderer.Rendered rendered = new RefusalRenderer(List.of(customizers)).render(MISSING_KEY,
                new HttpHeaders(), null, null);
        return new String(rendered.body(), StandardCharsets.UTF_8);
    }
}
