package dev.ratelimiter.autoconfigure;

import java.util.List;

import dev.ratelimiter.autoconfigure.security.LoopbackOnly;
import dev.ratelimiter.autoconfigure.security.OperatorEndpointExposure;
import dev.ratelimiter.core.InvalidLimitException;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which requests an operator port on loopback without authentication answers: those a browser page cannot forge. */
class LoopbackOnlyTest {

    @Test
    void loopbackNamesAndAddressesWithOrWithoutAPortAreAnswered() {
        for (String host : List.of("localhost", "LocalHost:8081", "127.0.0.1", "127.0.0.1:19418", "127.5.6.7:80",
                "[::1]", "[::1]:8081", " localhost:8081 ")) {
            assertThat(LoopbackOnly.refusal(List.of(host), null)).as(host).isNull();
        }
        assertThat(LoopbackOnly.refusal(null, null)).as("no Host at all (HTTP/1.0): no browser sends that").isNull();
    }

    @Test
    void anyOtherHostIsRefusedAsAPageOfThatSiteWouldSendIt() {
        for (String host : List.of("evil.example", "evil.example:19418", "localhost.evil.example", "127.0.0.1.nip.io",
                "localhost.", "10.0.0.5:8081", "0.0.0.0", "[::]:8081", "[::2]", "::1", "localhost:80:81",
                "localhost:http", "[::1", "", "127.0.0.1@evil.example")) {
            assertThat(LoopbackOnly.refusal(List.of(host), null)).as(host).isEqualTo(LoopbackOnly.HOST_NOT_LOOPBACK);
        }
        assertThat(LoopbackOnly.refusal(List.of("localhost", "evil.example"), null)).as("sent twice")
                .isEqualTo(LoopbackOnly.HOST_NOT_LOOPBACK);
    }

    @Test
    void aPageOfAnotherSiteIsRefusedEvenWhenItAddressesLoopback() {
        for (String origin : List.of("http://evil.example", "https://evil.example:19418", "null", "file://",
                "http://127.0.0.1.nip.io", "http://localhost@evil.example", "chrome-extension://abc", "not a url")) {
            assertThat(LoopbackOnly.refusal(List.of("127.0.0.1:8081"), List.of(origin))).as(origin)
                    .isEqualTo(LoopbackOnly.CROSS_SITE);
        }
        for (String origin : List.of("http://localhost:3000", "http://127.0.0.1:8081", "https://[::1]")) {
            assertThat(LoopbackOnly.refusal(List.of("localhost:8081"), List.of(origin))).as(origin).isNull();
        }
    }

    @Test
    void itAppliesWhereTheEndpointsAreOnLoopbackWithoutCredentials() {
        assertThat(onLoopback("management.server.port=8081", "management.server.address=127.0.0.1")).isTrue();
        assertThat(onLoopback("server.address=::1")).as("no management port: the server's").isTrue();
        assertThat(onLoopback("management.server.port=8081", "management.server.address=127.0.0.1",
                "ratelimit.management.security.enabled=false")).as("switched off, still loopback").isTrue();
        assertThat(onLoopback("management.server.port=8081", "management.server.address=127.0.0.1",
                "ratelimit.management.security.enabled=true")).as("credentials instead").isFalse();
        assertThat(onLoopback("management.server.port=8081", "management.server.address=0.0.0.0",
                "ratelimit.management.security.enabled=false")).as("beyond loopback: the operator's choice")
                .isFalse();
    }

    /** What an AOT-processed jar built for loopback meets when started with another management address. */
    @Test
    void theLoopbackFilterRefusesToBeMadeWhereTheEndpointsAreNoLongerOnLoopback() {
        assertThat(OperatorEndpointExposure.loopbackOnly(environment("management.server.port=8081",
                "management.server.address=127.0.0.1")).separatePort()).isTrue();
        assertThatThrownBy(() -> OperatorEndpointExposure.loopbackOnly(environment("management.server.port=8081",
                "management.server.address=0.0.0.0")))
                .isInstanceOfSatisfying(InvalidLimitException.class,
                        refused -> assertThat(refused.setting()).isEqualTo("management.server.address"))
                .hasMessageContaining("the management port on 0.0.0.0, which needs the operator accounts")
                .hasMessageContaining("-Dspring.aot.enabled=true");
        assertThatThrownBy(() -> OperatorEndpointExposure.loopbackOnly(environment("server.address=10.0.0.5",
                "ratelimit.management.security.enabled=false")))
                .isInstanceOfSatisfying(InvalidLimitException.class,
                        refused -> assertThat(refused.setting()).isEqualTo("server.address"))
                .hasMessageContaining("now on the server port (no management.server.port) on 10.0.0.5:");
    }

    private static boolean onLoopback(String... properties) {
        return OperatorEndpointExposure.of(environment(properties)).unauthenticatedOnLoopback();
    }

    private static MockEnvironment environment(String... properties) {
        MockEnvironment environment = new MockEnvironment();
        for (String property : properties) {
            String[] pair = property.split("=", 2);
            environment.setProperty(pair[0], pair[1]);
        }
        return environment;
    }

    @Test
    void theRefusalIsAProblemDocumentThatEchoesNothing() {
        JsonNode problem = JsonMapper.builder().build().readTree(LoopbackOnly.problem(LoopbackOnly.HOST_NOT_LOOPBACK));
        assertThat(problem.get("status").asInt()).isEqualTo(403);
        assertThat(problem.get("error").asString()).isEqualTo("host_not_loopback");
        assertThat(problem.get("type").asString()).isEqualTo("urn:ratelimit:problem:host-not-loopback");
        assertThat(problem.get("detail").asString()).contains("loopback name or address");
        assertThat(JsonMapper.builder().build().readTree(LoopbackOnly.problem(LoopbackOnly.CROSS_SITE)).get("error")
                .asString()).isEqualTo("cross_site_request");
    }
}
