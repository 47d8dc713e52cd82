package dev.ratelimiter.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.testsupport.KubernetesPod;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The gateway in a Kubernetes pod, as Spring Boot detects one (the pod's variables in the system environment): Boot
 * then has Reactor Netty replace the peer with the left-most {@code X-Forwarded-For} entry of any request, before the
 * limiter reads the address. Fourteen requests, each with a key nobody listed, under {@code unknown.policy:
 * per-address} with a bucket of 10. Before, the gateway started, {@code X-Forwarded-For: 198.51.100.<i>} got all 14
 * through, and so did a value that is no address ({@code x}), since a missing address skipped the bucket.
 */
class ServerForwardedAddressIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    private static final String[] PER_ADDRESS = { "ratelimit.store.type=redis", "ratelimit.store.timeout=2s",
        "ratelimit.default-tier=free", "ratelimit.tiers.free.api-keys=listed-key-1",
        "ratelimit.tiers.free.limits.default.capacity=1000", "ratelimit.tiers.free.limits.default.refill-tokens=1000",
        "ratelimit.api-key.unknown.policy=per-address", "ratelimit.api-key.unknown.limit.capacity=10",
        "ratelimit.api-key.unknown.limit.refill-tokens=1", "ratelimit.api-key.unknown.limit.refill-period=1h" };

    @Test
    void inAPodWithTheServersForwardingLeftOnTheGatewayDoesNotStart() {
        assertThatThrownBy(() -> start("ratelimit.rules.per-ip.key=client-ip",
                "ratelimit.rules.per-ip.capacity=100", "ratelimit.rules.per-ip.refill-tokens=100").close())
                .rootCause().isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("rule 'per-ip', ratelimit.api-key.unknown.policy per-address")
                .hasMessageContaining("server.forward-headers-strategy is not set and Spring Boot detected the "
                        + "cloud platform KUBERNETES")
                .hasMessageContaining("Set server.forward-headers-strategy=none")
                .hasMessageContaining("ratelimit.identity.trust-server-forwarded-address=true");
    }

    @Test
    void withTheStrategyNoneAClientCannotChooseItsAddress() {
        try (ConfigurableApplicationContext gateway = start("server.forward-headers-strategy=none")) {
            assertThat(admitted(gateway, i -> "198.51.100." + i)).as("the connection's bucket of 10").isEqualTo(10);
        }
    }

    @Test
    void withTheServersReadingTrustedAValueThatIsNoAddressIsOneSharedBucket() {
        try (ConfigurableApplicationContext gateway = start(
                "ratelimit.identity.trust-server-forwarded-address=true")) {
            assertThat(admitted(gateway, i -> "not-an-address-" + i)).as("one bucket for every non-address")
                    .isEqualTo(10);
            assertThat(admitted(gateway, i -> "198.51.100." + i)).as("the server's reading, as asked: an address "
                    + "each").isEqualTo(14);
        }
    }

    private static ConfigurableApplicationContext start(String... extra) {
        List<String> properties = new ArrayList<>(List.of(PER_ADDRESS));
        properties.addAll(List.of(extra));
        return GatewayInstance.start(List.of(), List.of(new KubernetesPod()), redis.url(), upstream.uri(),
                properties.toArray(String[]::new));
    }

    /** Of 14 requests, each with a fresh unlisted key and the forwarding entry {@code entry(i)}, how many passed. */
    private static int admitted(ConfigurableApplicationContext gateway, IntFunction<String> entry) {
        WebTestClient client = GatewayInstance.client(gateway);
        int admitted = 0;
        for (int i = 0; i < 14; i++) {
            String forwarded = entry.apply(i);
            String key = "unlisted-key-" + forwarded + "-" + i;
            int status = client.get().uri("/api/hello").header("X-API-Key", key)
                    .header("X-Forwarded-For", forwarded).exchange().returnResult(String.class).getStatus().value();
            admitted += status == 200 ? 1 : 0;
        }
        return admitted;
    }
}
