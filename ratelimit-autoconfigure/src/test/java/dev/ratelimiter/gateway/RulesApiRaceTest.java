package dev.ratelimiter.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.testsupport.LoopbackPorts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static dev.ratelimiter.gateway.RulesApiClient.IF_MATCH;
import static dev.ratelimiter.gateway.RulesApiClient.IF_NONE_MATCH;
import static dev.ratelimiter.gateway.RulesApiClient.ifMatch;
import static dev.ratelimiter.gateway.RulesApiClient.version;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateways on one Redis, two operators writing the same rule through each one's rules API at the same moment
 * with the same If-Match: exactly one write lands, the other is 412, and the rule stored is the winner's - never a
 * mix, never the loser's written over the winner's.
 */
class RulesApiRaceTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTests();

    static final List<ConfigurableApplicationContext> gateways = new ArrayList<>();
    static final List<RulesApiClient> apis = new ArrayList<>();
    static final ExecutorService operators = Executors.newFixedThreadPool(2);

    @BeforeAll
    static void start() {
        for (int i = 0; i < 2; i++) {
            int managementPort = LoopbackPorts.free();
            gateways.add(fixture.start("management.server.port=" + managementPort,
                    "management.server.address=127.0.0.1", "ratelimit.store.type=redis"));
            apis.add(new RulesApiClient(managementPort, "/v1/rules"));
        }
    }

    @AfterAll
    static void stop() {
        operators.shutdownNow();
        gateways.forEach(ConfigurableApplicationContext::close);
    }

    static String bucket(int capacity) {
        return "{\"match\": {\"routes\": [\"nothing-routes-here\"]}, \"capacity\": " + capacity
                + ", \"refillTokens\": 1, \"refillPeriod\": \"1h\"}";
    }

    @Test
    void ofTwoWritesWithTheSameIfMatchExactlyOneLandsAndTheOtherIs412() throws Exception {
        WebTestClient first = apis.get(0).as(null, null);
        WebTestClient second = apis.get(1).as(null, null);
        long version = version(apis.get(0).put(first, "raced", bucket(1), IF_NONE_MATCH, "*"));
        for (int round = 0; round < 15; round++) {
            int mine = 100 + round;
            int theirs = 200 + round;
            String tag = ifMatch(version);
            CountDownLatch go = new CountDownLatch(1);
            // threads of their own: the common pool has one thread on two cores, and the gateways use it too
            CompletableFuture<EntityExchangeResult<String>> one = CompletableFuture.supplyAsync(() -> {
                await(go);
                return apis.get(0).put(first, "raced", bucket(mine), IF_MATCH, tag);
            }, operators);
            CompletableFuture<EntityExchangeResult<String>> two = CompletableFuture.supplyAsync(() -> {
                await(go);
                return apis.get(1).put(second, "raced", bucket(theirs), IF_MATCH, tag);
            }, operators);
            go.countDown();
            int a = one.get(30, TimeUnit.SECONDS).getStatus().value();
            int b = two.get(30, TimeUnit.SECONDS).getStatus().value();
            assertThat(List.of(a, b)).as("round " + round + ": " + one.get().getResponseBody() + " / "
                    + two.get().getResponseBody()).containsExactlyInAnyOrder(200, 412);
            EntityExchangeResult<String> winner = a == 200 ? one.get() : two.get();
            WebTestClient winnersApi = a == 200 ? first : second;
            EntityExchangeResult<String> stored = winnersApi.get().uri("/v1/rules/raced").exchange()
                    .expectBody(String.class).returnResult();
            assertThat(RulesApiIntegrationTest.json(stored).get("capacity").asInt()).as("round " + round)
                    .isEqualTo(a == 200 ? mine : theirs);
            assertThat(version(stored)).isEqualTo(version(winner)).isGreaterThan(version);
            version = version(winner);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
