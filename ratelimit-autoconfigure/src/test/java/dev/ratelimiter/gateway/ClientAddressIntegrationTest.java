package dev.ratelimiter.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A per-address cap through the real gateway and Redis: 3 requests per client address. The test client connects
 * from 127.0.0.1, so it is a trusted proxy in one gateway and a plain client in the other.
 */
class ClientAddressIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    private static final String[] PER_ADDRESS = { "ratelimit.store.type=redis", "ratelimit.store.timeout=2s", "ratelimit.api-key.when-missing=allow",
        "ratelimit.rules.per-address.key=client-ip", "ratelimit.rules.per-address.capacity=3",
        "ratelimit.rules.per-address.refill-tokens=1", "ratelimit.rules.per-address.refill-period=1h" };

    @Test
    void aClientThatIsNotAProxyCannotPickAFreshBucketPerRequest() {
        try (ConfigurableApplicationContext gateway = start("ratelimit.identity.trusted-proxies=10.0.0.0/8")) {
            WebTestClient client = GatewayInstance.client(gateway);
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                String chosen = "203.0.113." + i;
                statuses.add(get(client, headers -> {
                    headers.set("X-Forwarded-For", chosen);
                    headers.set("Forwarded", "for=" + chosen);
                }));
            }
            assertThat(statuses).containsExactly(200, 200, 200, 429, 429, 429, 429, 429, 429, 429);
            assertThat(upstream.hits()).isEqualTo(3);
            assertThat(bucketsInRedis()).as("one bucket: the connection's address").isEqualTo(1);
        }
    }

    @Test
    void behindATrustedProxyEachForwardedClientHasItsBucketAndPortsAndJunkDoNotMakeNewOnes() {
        try (ConfigurableApplicationContext gateway = start("ratelimit.identity.trusted-proxies=127.0.0.1/32,::1")) {
            WebTestClient client = GatewayInstance.client(gateway);
            // the client wrote "1.1.1.1" itself; the (trusted) proxy appended the address it saw, with a port
            List<Integer> alice = new ArrayList<>();
            for (int port = 1000; port < 1005; port++) {
                String entry = "198.51.100.7:" + port;
                alice.add(get(client, headers -> headers.set("X-Forwarded-For", "1.1.1.1, " + entry)));
            }
            assertThat(alice).containsExactly(200, 200, 200, 429, 429);
            // another client behind the same proxy, IPv6 with a port
            assertThat(get(client, headers -> headers.set("X-Forwarded-For", "[2001:db8:7:7::1]:443"))).isEqualTo(200);
            // the same /64, another address: the same bucket
            for (int i = 0; i < 2; i++) {
                get(client, headers -> headers.set("X-Forwarded-For", "2001:db8:7:7:ffff::2"));
            }
            assertThat(get(client, headers -> headers.set("X-Forwarded-For", "2001:db8:7:7::3"))).isEqualTo(429);
            // the Forwarded header the proxy does not write, and a smuggled quote, choose nothing: the proxy's bucket
            for (int i = 0; i < 3; i++) {
                String chosen = "203.0.113." + i;
                assertThat(get(client, headers -> headers.set("Forwarded", "for=" + chosen))).isEqualTo(200);
            }
            assertThat(get(client, headers -> headers.set("X-Forwarded-For", "[203.0.113.9]\""))).isEqualTo(429);
            // names and garbage are not looked up: they count as the proxy (127.0.0.1), one bucket for all
            List<Integer> junk = new ArrayList<>();
            for (String value : List.of("localhost", "unknown", "example.com", "_x", "not an address")) {
                junk.add(get(client, headers -> headers.set("X-Forwarded-For", value)));
            }
            assertThat(junk).as("the proxy's bucket, already spent").containsExactly(429, 429, 429, 429, 429);
            assertThat(upstream.hits()).isEqualTo(3 + 3 + 3);
            assertThat(bucketsInRedis()).as("198.51.100.7, 2001:db8:7:7::/64, the proxy").isEqualTo(3);
        }
    }

    private static ConfigurableApplicationContext start(String... extra) {
        List<String> properties = new ArrayList<>(List.of(PER_ADDRESS));
        properties.addAll(List.of(extra));
        return fixture.start(properties.toArray(String[]::new));
    }

    private static long bucketsInRedis() {
        return redis.command("KEYS", "rl:*:per-address@t").lines().filter(line -> !line.isBlank()).count();
    }

    private static int get(WebTestClient client, Consumer<HttpHeaders> headers) {
        return client.get().uri("/api/hello").headers(headers).exchange().returnResult(String.class).getStatus()
                .value();
    }
}
