package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimiter.core.StoreBreaker;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.gateway.ResponseCharges.Outcome;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.UsageUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * charge-from-response through a started gateway, a real Redis and an upstream that reports usage: the minimum spent
 * up front, the rest charged once the response ended (JSON field cut across chunks, server-sent events, a header),
 * the one-capacity floor, nothing more for a response that reports nothing, fails or is cancelled, the response
 * delivered whole while Redis is down at charge time, and 32 clients in parallel charged exactly what was reported.
 */
class ChargeFromResponseIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEach();
    static final RedisServerExtension redis = fixture.redis();
    static final UsageUpstream upstream = new UsageUpstream();
    static final BlockingQueue<Charged> charges = new LinkedBlockingQueue<>();

    static ConfigurableApplicationContext gateway;
    static WebTestClient client;

    record Charged(String rule, Outcome outcome, double tokens) {
    }

    @Configuration(proxyBeanMethods = false)
    static class Recording {

        @Bean
        ResponseCharges.Listener recordingCharges() {
            return (rule, outcome, tokens) -> charges.add(new Charged(rule, outcome, tokens));
        }
    }

    @BeforeAll
    static void startGateway() {
        gateway = GatewayInstance.start(List.of(Recording.class), redis.url(), upstream.uri(),
                "ratelimit.store.type=redis", "ratelimit.store.timeout=2s", "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=1000000000",
                "ratelimit.tiers.free.limits.default.refill-tokens=1000000000",
                "ratelimit.tiers.free.limits.default.refill-period=1h",
                // 1,000 tokens an hour, 10 of them spent up front
                "ratelimit.rules.llm.match.paths[0]=/api/json/**", "ratelimit.rules.llm.match.paths[1]=/api/sse/**",
                "ratelimit.rules.llm.match.paths[2]=/api/none/**", "ratelimit.rules.llm.match.paths[3]=/api/error/**",
                "ratelimit.rules.llm.match.paths[4]=/api/endless/**",
                "ratelimit.rules.llm.match.paths[5]=/api/gated/**",
                "ratelimit.rules.llm.capacity=1000", "ratelimit.rules.llm.refill-tokens=1000",
                "ratelimit.rules.llm.refill-period=1h",
                "ratelimit.rules.llm.charge-from-response.json-field=usage.total_tokens",
                "ratelimit.rules.llm.charge-from-response.minimum=10",
                "ratelimit.rules.by-header.match.paths[0]=/api/header/**",
                "ratelimit.rules.by-header.match.paths[1]=/api/endless-header/**", "ratelimit.rules.by-header.capacity=1000",
                "ratelimit.rules.by-header.refill-tokens=1000", "ratelimit.rules.by-header.refill-period=1h",
                "ratelimit.rules.by-header.charge-from-response.header=X-Usage-Tokens",
                "ratelimit.rules.by-header.charge-from-response.minimum=10",
                // a sliding window charged the same way: the reported amount added to the window in progress
                "ratelimit.rules.windowed.match.paths[0]=/api/header-window/**",
                "ratelimit.rules.windowed.algorithm=sliding-window", "ratelimit.rules.windowed.limit=1000",
                "ratelimit.rules.windowed.window=1h",
                "ratelimit.rules.windowed.charge-from-response.header=X-Usage-Tokens",
                "ratelimit.rules.windowed.charge-from-response.minimum=10",
                // a calendar quota charged the same way: the reported amount counted into the month in progress
                "ratelimit.rules.monthly.match.paths[0]=/api/header-quota/**",
                "ratelimit.rules.monthly.algorithm=calendar-quota", "ratelimit.rules.monthly.limit=1000",
                "ratelimit.rules.monthly.period=month", "ratelimit.rules.monthly.zone=Europe/Berlin",
                "ratelimit.rules.monthly.charge-from-response.header=X-Usage-Tokens",
                "ratelimit.rules.monthly.charge-from-response.minimum=10",
                // a bucket far from any limit, refilled by a token in 30 s: what is left is what was charged
                "ratelimit.rules.many.match.paths[0]=/api/json-many/**", "ratelimit.rules.many.capacity=1000000",
                "ratelimit.rules.many.refill-tokens=1000000", "ratelimit.rules.many.refill-period=365d",
                "ratelimit.rules.many.charge-from-response.json-field=usage.total_tokens",
                "ratelimit.rules.many.charge-from-response.minimum=10");
        GatewayInstance.awaitRedis(gateway);
        client = GatewayInstance.client(gateway);
    }

    @AfterAll
    static void stopGateway() {
        gateway.close();
        upstream.close();
    }

    /**
     * The charges of the test before, also one still on its way: a test's last request is charged after its answer, so
     * its charge can land after the test ended (seen once in a full run: the next test read a NOT_REPORTED that was not
     * its own). Drained until none has come for half a second.
     */
    @BeforeEach
    void forgetCharges() throws InterruptedException {
        while (charges.poll(500, TimeUnit.MILLISECONDS) != null) {
            // a late charge of the test before
        }
    }

    @Test
    void theReportedTokensAreChargedFromAJsonFieldCutAcrossChunks() throws InterruptedException {
        EntityExchangeResult<String> first = call("/api/json/chat", "k-json", 300);
        assertThat(first.getStatus().value()).isEqualTo(200);
        assertThat(first.getResponseBody()).endsWith("\"total_tokens\":300}}").contains("99999");
        // the fields are written before the body: the minimum spent, not yet the rest
        assertThat(remaining(first)).isEqualTo(990);
        assertThat(next()).isEqualTo(new Charged("llm", Outcome.CHARGED, 290));

        assertThat(remaining(call("/api/json/chat", "k-json", 1))).isBetween(690L, 692L);
    }

    @Test
    void theLastEventOfAStreamedAnswerIsCharged() throws InterruptedException {
        EntityExchangeResult<String> first = call("/api/sse/chat", "k-sse", 410);
        assertThat(first.getResponseBody()).contains("data: [DONE]");
        assertThat(next()).isEqualTo(new Charged("llm", Outcome.CHARGED, 400));
        assertThat(remaining(call("/api/sse/chat", "k-sse", 1))).isBetween(580L, 582L);
    }

    @Test
    void aHeaderIsCharged() throws InterruptedException {
        call("/api/header/x", "k-header", 510);
        assertThat(next()).isEqualTo(new Charged("by-header", Outcome.CHARGED, 500));
        assertThat(remaining(call("/api/header/x", "k-header", 1))).isBetween(480L, 482L);
    }

    @Test
    void aSlidingWindowIsChargedTheReportedAmountUpToOneLimitMore() throws InterruptedException {
        assertThat(remaining(call("/api/header-window/x", "k-window", 600))).isEqualTo(990);
        assertThat(next()).isEqualTo(new Charged("windowed", Outcome.CHARGED, 590));
        assertThat(remaining(call("/api/header-window/x", "k-window", 5000))).isEqualTo(390);
        assertThat(next()).isEqualTo(new Charged("windowed", Outcome.CHARGED, 4990));
        // the window holds at most one limit more than it counted: refused for the rest of the hour
        EntityExchangeResult<String> refused = call("/api/header-window/x", "k-window", 1);
        assertThat(refused.getStatus().value()).isEqualTo(429);
    }

    @Test
    void aCalendarQuotaIsChargedTheReportedAmountIntoThePeriodInProgress() throws InterruptedException {
        assertThat(remaining(call("/api/header-quota/x", "k-quota", 600))).isEqualTo(990);
        assertThat(next()).isEqualTo(new Charged("monthly", Outcome.CHARGED, 590));
        assertThat(remaining(call("/api/header-quota/x", "k-quota", 100))).as("1000 - 600 - the minimum")
                .isEqualTo(390);
        assertThat(next()).isEqualTo(new Charged("monthly", Outcome.CHARGED, 90));
        assertThat(remaining(call("/api/header-quota/x", "k-quota", 5000))).isEqualTo(290);
        assertThat(next()).isEqualTo(new Charged("monthly", Outcome.CHARGED, 4990));
        // spent past the month's quota: refused until the month ends, which Retry-After points at
        EntityExchangeResult<String> refused = call("/api/header-quota/x", "k-quota", 1);
        assertThat(refused.getStatus().value()).isEqualTo(429);
        java.time.ZonedDateTime now = java.time.ZonedDateTime.now(java.time.ZoneId.of("Europe/Berlin"));
        long toMonthEnd = java.time.Duration.between(now, now.toLocalDate().withDayOfMonth(1).plusMonths(1)
                .atStartOfDay(now.getZone())).toSeconds();
        assertThat(Long.parseLong(refused.getResponseHeaders().getFirst("Retry-After")))
                .as("seconds to the first of next month in Berlin").isBetween(toMonthEnd - 60, toMonthEnd + 60);
    }

    @Test
    void theBucketIsNeverDrivenBelowOneCapacityOfDebtAndRefusesUntilItRefilled() throws InterruptedException {
        call("/api/json/chat", "k-floor", 1_000_000);
        assertThat(next().outcome()).isEqualTo(Outcome.CHARGED);
        EntityExchangeResult<String> refused = call("/api/json/chat", "k-floor", 1);
        assertThat(refused.getStatus().value()).isEqualTo(429);
        // from -1000 (the floor), 1,010 tokens at 1,000 an hour: 3,636 s; a lower floor would ask for longer
        long retryAfter = Long.parseLong(refused.getResponseHeaders().getFirst("Retry-After"));
        assertThat(retryAfter).isBetween(3600L, 3640L);
    }

    @Test
    void aResponseReportingNothingOrAnErrorIsChargedOnlyTheMinimum() throws InterruptedException {
        call("/api/none/chat", "k-none", 0);
        assertThat(next()).isEqualTo(new Charged("llm", Outcome.NOT_REPORTED, 0));
        EntityExchangeResult<String> failed = call("/api/error/chat", "k-none", 300);
        assertThat(failed.getStatus().value()).isEqualTo(500);
        assertThat(next()).isEqualTo(new Charged("llm", Outcome.ERROR_STATUS, 0));
        assertThat(remaining(call("/api/json/chat", "k-none", 1))).isBetween(970L, 972L);
    }

    @Test
    void aClientGoneMidBodyIsChargedOnlyTheMinimum() throws InterruptedException {
        HttpClient http = HttpClient.create().baseUrl("http://127.0.0.1:" + GatewayInstance.port(gateway));
        String firstChunk = http.headers(headers -> headers.add("X-API-Key", "k-cancel").add("X-Test-Usage", "500"))
                .get().uri("/api/endless/chat").responseContent().asString().next().block(Duration.ofSeconds(10));
        assertThat(firstChunk).startsWith("{\"choices\"");
        assertThat(next()).isEqualTo(new Charged("llm", Outcome.CANCELLED, 0));
        assertThat(remaining(call("/api/json/chat", "k-cancel", 1))).isBetween(980L, 982L);
    }

    @Test
    void aClientGoneAfterTheAmountWentByIsChargedIt() throws InterruptedException {
        HttpClient http = HttpClient.create().baseUrl("http://127.0.0.1:" + GatewayInstance.port(gateway));
        String firstChunk = http.headers(headers -> headers.add("X-API-Key", "k-gone").add("X-Test-Usage", "400"))
                .get().uri("/api/endless-header/chat").responseContent().asString().next()
                .block(Duration.ofSeconds(10));
        assertThat(firstChunk).startsWith("{\"choices\"");
        assertThat(next()).isEqualTo(new Charged("by-header", Outcome.CHARGED, 390));
    }

    @Test
    void redisDownAtChargeTimeLosesTheChargeButNotTheResponse() throws InterruptedException {
        Mono<EntityExchangeResult<String>> pending = Mono.fromCallable(() -> call("/api/gated/chat", "k-down", 700))
                .subscribeOn(Schedulers.boundedElastic()).cache();
        pending.subscribe();
        awaitForwarded();
        redis.server().kill();
        try {
            upstream.release();
            EntityExchangeResult<String> answered = pending.block(Duration.ofSeconds(30));
            assertThat(answered.getStatus().value()).isEqualTo(200);
            assertThat(answered.getResponseBody()).endsWith("\"total_tokens\":700}}");
            assertThat(next()).isEqualTo(new Charged("llm", Outcome.STORE_FAILED, 690));
        }
        finally {
            redis.server().restart();
            // back on Redis before the next test: a request its fallback decides spends its minimum in this
            // instance's bucket, not in Redis's (a test after this one read 590 where 580 was right)
            awaitStoreDecides();
        }
    }

    /**
     * Found by the review r35c: while Redis is down the fallback admits requests charged from the response
     * (failure-mode local, the default) by the minimum they spend in this instance's bucket, and the reported amount
     * went to Redis only, where it was lost: ten answers of 700 tokens were all admitted from a bucket of 1,000. Now
     * what Redis cannot take is spent from the instance's own bucket (down to one capacity of debt) and owed to Redis:
     * 990, then 300 after the first charge, then 290 → −400, so the third is refused, as with Redis up.
     */
    @Test
    void whileRedisIsDownTheReportedAmountStillHoldsTheClientToItsBucket() throws InterruptedException {
        redis.server().kill();
        try {
            int admitted = 0;
            for (int i = 0; i < 10; i++) {
                if (call("/api/json/chat", "k-outage", 700).getStatus().value() == 200) {
                    admitted++;
                    assertThat(next()).as("the charge Redis could not take, held here")
                            .isEqualTo(new Charged("llm", Outcome.STORE_FAILED, 690));
                }
            }
            assertThat(admitted).as("answers of 700 tokens admitted from a bucket of 1,000 while Redis is down")
                    .isBetween(1, 3);
        }
        finally {
            redis.server().restart();
            // back on Redis before the next test: a request its fallback decides spends its minimum in this
            // instance's bucket, not in Redis's (a test after this one read 590 where 580 was right)
            awaitStoreDecides();
        }
    }

    @Test
    void thirtyTwoClientsOfOneKeyAreChargedExactlyWhatWasReported() throws InterruptedException {
        Random random = new Random(35);
        List<Integer> usages = new ArrayList<>();
        for (int i = 0; i < 32 * 4; i++) {
            usages.add(10 + random.nextInt(2000));
        }
        List<Integer> statuses = Flux.fromIterable(usages)
                .flatMap(usage -> Mono.fromCallable(() -> call("/api/json-many/chat", "k-many", usage).getStatus()
                        .value()).subscribeOn(Schedulers.boundedElastic()), 32)
                .collectList().block(Duration.ofSeconds(60));
        assertThat(statuses).hasSize(usages.size()).containsOnly(200);
        double charged = 0;
        for (int i = 0; i < usages.size(); i++) {
            Charged one = next();
            assertThat(one.rule()).isEqualTo("many");
            charged += one.tokens();
        }
        long reported = usages.stream().mapToLong(Integer::longValue).sum();
        assertThat(charged).isEqualTo(reported - 10.0 * usages.size());
        // the next request's minimum on top; refilled by a few tokens at most in the meantime
        assertThat(remaining(call("/api/json-many/chat", "k-many", 10))).isBetween(1_000_000 - reported - 10,
                1_000_000 - reported - 6);
    }

    private static EntityExchangeResult<String> call(String path, String apiKey, long usage) {
        return client.post().uri(path).header("X-API-Key", apiKey).header("X-Test-Usage", String.valueOf(usage))
                .bodyValue("{\"model\":\"stub\"}").exchange().expectBody(String.class).returnResult();
    }

    private static long remaining(EntityExchangeResult<?> result) {
        return Long.parseLong(result.getResponseHeaders().getFirst("X-RateLimit-Remaining"));
    }

    /** Redis back and the breaker closed: the next decisions are Redis's again, not the fallback's. */
    private static void awaitStoreDecides() {
        GatewayInstance.awaitRedis(gateway);
        StoreBreaker breaker = gateway.getBean(StoreStack.class).failSafe().breaker();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (breaker.state() != StoreBreaker.State.CLOSED && System.nanoTime() < deadline) {
            client.get().uri("/api/probe").header("X-API-Key", "k-probe").exchange();
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
        assertThat(breaker.state()).as("the store breaker closed again").isEqualTo(StoreBreaker.State.CLOSED);
    }

    /** The next charge the gateway reports; it comes once the response has ended, after the client had it. */
    private static Charged next() throws InterruptedException {
        Charged charged = charges.poll(30, TimeUnit.SECONDS);
        assertThat(charged).as("a charge reported within 30 s").isNotNull();
        return charged;
    }

    /** Waits until the gated request has reached the upstream (its bucket was decided, its body started). */
    private static void awaitForwarded() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (upstream.gated() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(upstream.gated()).isEqualTo(1);
    }
}
