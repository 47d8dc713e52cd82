package dev.ratelimiter.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Pattern;

import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes the whole request surface through the real gateway and Redis: API key, user, tenant, X-Forwarded-For and
 * Forwarded headers of any bytes and length, header lines repeated or injected, paths of any shape. Whatever is sent:
 * never a 5xx, never a Redis key outside the limiter's namespace and shapes, and a victim's buckets untouched.
 *
 * <p>Fixed seed, {@value #DEFAULT_REQUESTS} requests in the suite; {@code -Dfuzz.requests=50000 -Dfuzz.seed=<n>} for a
 * longer run (see the operator notes).
 */
class RequestSurfaceFuzzTest {

    static final int DEFAULT_REQUESTS = 600;

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    /**
     * Every key the limiter may write: a partition of 22 url-safe characters (a shard suffix), a rule and a shape;
     * the instance heartbeats; and the start-up probe's bucket, which lives a moment (seen when the fuzz finishes
     * within it of the start).
     */
    private static final Pattern NAMESPACE = Pattern.compile("rl:\\{instances\\}|rl:\\{warmup\\}:startup"
            + "|rl:\\{[A-Za-z0-9_-]{22}(#[0-9]+)?\\}:[a-z.-]+@(t|c|w[0-9]+)(:[A-Za-z0-9_-]{22})?");

    private static final String[] HEADERS = { "X-API-Key", "X-User-Id", "X-Tenant-Id", "X-Forwarded-For", "Forwarded" };

    @Test
    void noInputCausesA5xxEscapesTheNamespaceOrTouchesAnotherClient() throws IOException {
        int requests = Integer.getInteger("fuzz.requests", DEFAULT_REQUESTS);
        long seed = Long.getLong("fuzz.seed", 14L);
        try (ConfigurableApplicationContext gateway = GatewayInstance.start(redis.url(), upstream.uri(),
                "ratelimit.store.type=redis", "ratelimit.store.timeout=2s", "ratelimit.default-tier=free",
                "ratelimit.api-key.when-missing=allow", "server.max-http-request-header-size=16KB",
                // no static resources: their lookup reads jars on the event loop, which is Spring's, not the limiter's
                "spring.web.resources.add-mappings=false",
                "ratelimit.identity.trusted-proxies=127.0.0.1,::1",
                "ratelimit.tiers.free.limits.default.capacity=50", "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.tiers.free.limits.default.refill-period=1h",
                "ratelimit.rules.per-tenant.key=tenant", "ratelimit.rules.per-tenant.capacity=1000",
                "ratelimit.rules.per-tenant.refill-tokens=1", "ratelimit.rules.per-tenant.refill-period=1h",
                "ratelimit.rules.per-user.key=user", "ratelimit.rules.per-user.when-missing=skip",
                "ratelimit.rules.per-user.algorithm=sliding-window", "ratelimit.rules.per-user.limit=1000",
                "ratelimit.rules.per-user.window=1h",
                "ratelimit.rules.per-address.key=client-ip", "ratelimit.rules.per-address.capacity=100000",
                "ratelimit.rules.per-address.refill-tokens=100", "ratelimit.rules.per-address.refill-period=1h",
                "ratelimit.rules.hello-cap.match.paths=/api/hello/**", "ratelimit.rules.hello-cap.capacity=1000",
                "ratelimit.rules.hello-cap.refill-tokens=1", "ratelimit.rules.hello-cap.refill-period=1h")) {
            int port = Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port"));
            assertThat(RawHttp.get(port, "/api/hello", "X-API-Key: victim", "X-User-Id: victim-user",
                    "X-Tenant-Id: victim-tenant")).isEqualTo(200);
            Map<String, String> victimBefore = victimBuckets();

            Random random = new Random(seed);
            Map<Integer, Integer> statuses = new TreeMap<>();
            for (int i = 0; i < requests; i++) {
                int status = RawHttp.get(port, path(random), "X-Fuzz", headerLines(random));
                statuses.merge(status, 1, Integer::sum);
                assertThat(status).as("request %d of seed %d", i, seed).isLessThan(500);
            }
            System.out.println("RequestSurfaceFuzzTest: " + requests + " requests (seed " + seed + "), statuses "
                    + statuses);

            for (String key : redis.command("KEYS", "*").lines().filter(line -> !line.isBlank()).toList()) {
                assertThat(key).as("a key the limiter wrote").matches(NAMESPACE);
            }
            assertThat(victimBuckets()).as("the victim's buckets").isEqualTo(victimBefore);
            assertThat(statuses.keySet()).as("the fuzz reached the limiter and the upstream").contains(200);
        }
    }

    /** The victim's buckets: its API key partition, its tenant's and its user's. */
    private static Map<String, String> victimBuckets() {
        Map<String, String> buckets = new TreeMap<>();
        for (String partition : List.of(ClientIds.unkeyed().of("victim"))) {
            for (String key : redis.command("KEYS", "rl:{" + partition + "}:*").lines().filter(l -> !l.isBlank())
                    .toList()) {
                buckets.put(key, redis.command("HGETALL", key));
            }
        }
        return buckets;
    }

    private static String path(Random random) {
        String[] pieces = { "/api", "/hello", "/", "//", "/.", "/..", ";v=1", "%2F", "%2e", "%252e", "%00", "%ZZ", "%",
            "\\", "/HELLO", "?q=1", "#f", "*", "~", "%C3%A9", "/x" };
        StringBuilder path = new StringBuilder(random.nextInt(10) == 0 ? "" : "/api");
        int parts = random.nextInt(8);
        for (int i = 0; i < parts; i++) {
            if (random.nextInt(5) == 0) {
                path.append((char) (0x21 + random.nextInt(0x5e))); // any printable ASCII but space
            }
            else {
                path.append(pieces[random.nextInt(pieces.length)]);
            }
        }
        if (random.nextInt(50) == 0) {
            path.append("/a".repeat(2000));
        }
        return path.length() == 0 ? "/" : path.toString();
    }

    /** A value for the X-Fuzz header that ends it and adds the identity header lines (any bytes but CR and LF). */
    private static byte[] headerLines(Random random) {
        ByteArrayOutputStream lines = new ByteArrayOutputStream();
        lines.writeBytes("1".getBytes(StandardCharsets.US_ASCII));
        int count = random.nextInt(5);
        for (int i = 0; i < count; i++) {
            String name = HEADERS[random.nextInt(HEADERS.length)];
            lines.writeBytes(("\r\n" + name + ": ").getBytes(StandardCharsets.US_ASCII));
            lines.writeBytes(value(random, name));
        }
        return lines.toByteArray();
    }

    private static byte[] value(Random random, String header) {
        switch (random.nextInt(4)) {
            case 0 -> {
                // any bytes but line breaks, any length up to 2 KB
                byte[] bytes = new byte[random.nextInt(random.nextInt(10) == 0 ? 2048 : 40)];
                random.nextBytes(bytes);
                for (int i = 0; i < bytes.length; i++) {
                    if (bytes[i] == '\r' || bytes[i] == '\n') {
                        bytes[i] = ' ';
                    }
                }
                return bytes;
            }
            case 1 -> {
                String[] tricky = { "victim", "{victim}", "victim}:free.default@t", "rl:{", "*", "", " ", "victim ",
                    "1.2.3.4", "1.2.3.4, 5.6.7.8", "::1", "[::1]:80", "for=1.2.3.4", "for=\"[2001:db8::1]:443\";by=x",
                    "unknown", "localhost", "999.999.999.999", "0x7f.1", "ключ", "\t", "a,b", "victim-tenant" };
                String value = tricky[random.nextInt(tricky.length)];
                // "victim " is the victim's key (HTTP trims a header value): only the victim may send it
                return (header.equals("X-API-Key") && value.strip().equals("victim") ? "not-the-victim" : value)
                        .getBytes(StandardCharsets.UTF_8);
            }
            default -> {
                return ("client-" + random.nextInt(20)).getBytes(StandardCharsets.US_ASCII);
            }
        }
    }
}
