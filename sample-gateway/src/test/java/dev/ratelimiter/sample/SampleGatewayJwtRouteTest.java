package dev.ratelimiter.sample;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's JWT route: a token signed with the demo secret is limited per its tenant claim, a request without one
 * never reaches the upstream, and the other demo routes still need no token.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "management.server.port=0")
class SampleGatewayJwtRouteTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @LocalServerPort
    int port;

    @Value("${demo.jwt.secret}")
    String secret;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.url", redis::url);
        registry.add("ratelimit.store.timeout", () -> "1s");
        // no refill while the test runs: the counts are exact
        registry.add("ratelimit.rules.secure-per-tenant.refill-period", () -> "1h");
    }

    @Test
    void aTokenIsLimitedPerItsTenantAndTheOtherRoutesNeedNone() throws JOSEException {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(10)).build();
        String acme = token("alice", "acme");

        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            statuses.add(client.get().uri("/secure/hello").headers(headers -> headers.setBearerAuth(acme))
                    .exchange().returnResult(String.class).getStatus().value());
        }
        assertThat(statuses).containsExactly(200, 200, 200, 429);
        String otherUserOfAcme = token("bob", "acme");
        assertThat(client.get().uri("/secure/hello").headers(headers -> headers.setBearerAuth(otherUserOfAcme))
                .exchange().returnResult(String.class).getStatus().value()).as("the tenant's bucket").isEqualTo(429);
        String globex = token("carol", "globex");
        client.get().uri("/secure/hello").headers(headers -> headers.setBearerAuth(globex)).exchange()
                .expectStatus().isOk().expectBody(String.class)
                .value(body -> assertThat(body).contains("Hello from the demo upstream"));

        client.get().uri("/secure/hello").exchange().expectStatus().isUnauthorized();
        client.get().uri("/api/hello").header("X-API-Key", "demo").exchange().expectStatus().isOk();
    }

    private String token(String subject, String tenant) throws JOSEException {
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), new JWTClaimsSet.Builder().subject(subject)
                .claim("azp", "demo-jwt-client").claim("tenant_id", tenant).claim("plan", "pro").build());
        jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
        return jwt.serialize();
    }
}
