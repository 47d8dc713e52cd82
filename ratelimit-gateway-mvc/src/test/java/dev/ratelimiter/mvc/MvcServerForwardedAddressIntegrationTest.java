package dev.ratelimiter.mvc;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.testsupport.KubernetesPod;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The MVC gateway in a Kubernetes pod, as Spring Boot detects one: Boot then adds Tomcat's {@code RemoteIpValve},
 * which believes {@code X-Forwarded-For} from any private-range peer (this test's loopback one too) and makes its
 * entry the request's remote address before the limiter reads it. Fourteen requests, each with a key nobody listed,
 * under {@code unknown.policy: per-address} with a bucket of 10; before, the gateway started and a header that is no
 * address got all 14 through.
 */
class MvcServerForwardedAddressIntegrationTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = new MvcGatewayFixture();

    private static final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private static final String[] PER_ADDRESS = { "ratelimit.store.timeout=2s",
        "ratelimit.tiers.free.api-keys=listed-key-1", "ratelimit.api-key.unknown.policy=per-address",
        "ratelimit.api-key.unknown.limit.capacity=10", "ratelimit.api-key.unknown.limit.refill-tokens=1",
        "ratelimit.api-key.unknown.limit.refill-period=1h" };

    @Test
    void inAPodWithTheServersForwardingLeftOnTheGatewayDoesNotStart() {
        assertThatThrownBy(() -> start().close()).rootCause().isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("ratelimit.api-key.unknown.policy per-address")
                .hasMessageContaining("Spring Boot detected the cloud platform KUBERNETES")
                .hasMessageContaining("Set server.forward-headers-strategy=none");
    }

    @Test
    void withTheStrategyNoneAClientCannotChooseItsAddress() throws Exception {
        try (ConfigurableApplicationContext gateway = start("server.forward-headers-strategy=none")) {
            assertThat(admitted(gateway, i -> "198.51.100." + i)).as("the connection's bucket of 10").isEqualTo(10);
        }
    }

    @Test
    void withTheServersReadingTrustedAValueThatIsNoAddressIsOneSharedBucket() throws Exception {
        try (ConfigurableApplicationContext gateway = start(
                "ratelimit.identity.trust-server-forwarded-address=true")) {
            assertThat(admitted(gateway, i -> "not-an-address-" + i)).as("one bucket for every non-address")
                    .isEqualTo(10);
        }
    }

    private static ConfigurableApplicationContext start(String... extra) {
        List<String> properties = new ArrayList<>(List.of(PER_ADDRESS));
        properties.addAll(List.of(extra));
        return MvcGatewayApplications.start(fixture, List.of(new KubernetesPod()), properties.toArray(String[]::new));
    }

    /** Of 14 requests, each with a fresh unlisted key and the forwarding entry {@code entry(i)}, how many passed. */
    private static int admitted(ConfigurableApplicationContext gateway, IntFunction<String> entry)
            throws IOException, InterruptedException {
        int port = MvcGatewayApplications.port(gateway, false);
        int admitted = 0;
        for (int i = 0; i < 14; i++) {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/hello"))
                    .timeout(Duration.ofSeconds(10)).header("X-API-Key", "unlisted-key-" + i)
                    .header("X-Forwarded-For", entry.apply(i)).GET().build();
            admitted += client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200 ? 1 : 0;
        }
        return admitted;
    }
}
