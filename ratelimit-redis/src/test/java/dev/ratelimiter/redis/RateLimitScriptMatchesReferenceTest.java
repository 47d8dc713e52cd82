package dev.ratelimiter.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import dev.ratelimiter.testsupport.RedisServerExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * rate_limit.lua, rewritten to cost less, against the script as it was before ({@code rate_limit_reference.lua}):
 * for random calls — several requests of several checks of every kind, shadow checks, refusals, clock steps back and
 * far ahead, keys of another type, stale calls, states too long to keep — both give the same reply and leave the same
 * keys, fields, values, scores and expiry. Each script runs in a database of its own on one clock, pinned for both:
 * the test rewrites their {@code TIME} call to read it from a hash. Every case is replayable by its seed.
 */
class RateLimitScriptMatchesReferenceTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final String CLOCK = "clock";
    /** Where the scripts, as the test runs them, note every PEXPIRE they make: key and TTL, in order. */
    private static final String EXPIRES_SET = "expires-set";
    private static final int SEEDS = 300;
    private static final int CALLS_PER_SEED = 25;

    private static RedisClient client;
    private static StatefulRedisConnection<String, String> reference;
    private static StatefulRedisConnection<String, String> rewritten;
    private static String referenceScript;
    private static String rewrittenScript;

    @BeforeAll
    static void connect() throws IOException {
        client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
        reference = client.connect();
        reference.sync().select(1);
        rewritten = client.connect();
        rewritten.sync().select(2);
        referenceScript = noting(onPinnedClock(read("dev/ratelimiter/redis/rate_limit_reference.lua")));
        rewrittenScript = noting(onPinnedClock(LimiterScript.RATE_LIMIT.body()));
    }

    @AfterAll
    static void disconnect() {
        reference.close();
        rewritten.close();
        client.shutdown();
    }

    @Test
    void everyCallRepliesAndWritesWhatTheReferenceDid() {
        for (int seed = 0; seed < SEEDS; seed++) {
            reference.sync().flushdb();
            rewritten.sync().flushdb();
            Case scenario = new Case(new SplittableRandom(seed));
            // Each script sets its TTLs from Redis's real clock, at its own moment: an expiry may differ by as much
            // as the two runs of the call that set it lay apart.
            long apartMillis = 0;
            for (int call = 0; call < CALLS_PER_SEED; call++) {
                String where = "seed " + seed + ", call " + call;
                scenario.step();
                String[] keys = scenario.keys();
                String[] arguments = scenario.arguments();
                long before = System.currentTimeMillis();
                String expected = run(reference.sync(), referenceScript, scenario, keys, arguments);
                String actual = run(rewritten.sync(), rewrittenScript, scenario, keys, arguments);
                apartMillis = Math.max(apartMillis, System.currentTimeMillis() - before);
                assertThat(actual).as("reply, " + where + ": " + List.of(arguments)).isEqualTo(expected);
                // TTLs exactly, as the scripts set them; the expiry they led to is compared below, within the time
                // the two runs lay apart.
                assertThat(ttlsSet(rewritten.sync())).as("TTLs set, " + where).isEqualTo(ttlsSet(reference.sync()));
                for (String key : scenario.pool()) {
                    assertThat(state(rewritten.sync(), key)).as("state of " + key + ", " + where)
                            .isEqualTo(state(reference.sync(), key));
                    Expiry expiry = Expiry.of(rewritten.sync(), key);
                    Expiry referenceExpiry = Expiry.of(reference.sync(), key);
                    assertThat(expiry.ttl() < 0 ? expiry.ttl() : 0).as("no expiry, or no key: " + key + ", " + where)
                            .isEqualTo(referenceExpiry.ttl() < 0 ? referenceExpiry.ttl() : 0);
                    if (expiry.ttl() >= 0) {
                        // Later than the reference's, by no more than the two runs lay apart.
                        assertThat(expiry.latest() - referenceExpiry.earliest()).as("expiry of " + key + ", " + where)
                                .isGreaterThanOrEqualTo(0);
                        assertThat(expiry.earliest() - referenceExpiry.latest()).as("expiry of " + key + ", " + where)
                                .isLessThanOrEqualTo(apartMillis + 1);
                    }
                }
            }
        }
    }

    private static String run(RedisCommands<String, String> redis, String script, Case scenario, String[] keys,
            String[] arguments) {
        scenario.plantWrongTypes(redis);
        redis.hset(CLOCK, Map.of("s", Long.toString(scenario.seconds), "us", Long.toString(scenario.micros)));
        redis.del(EXPIRES_SET);
        try {
            return String.valueOf(redis.<List<Object>>eval(script, ScriptOutputType.MULTI, keys, arguments));
        }
        catch (RedisException ex) {
            return "error: " + ex.getMessage();
        }
    }

    /**
     * When a key expires, in this JVM's milliseconds, known within the time its PTTL took to ask (PEXPIRETIME needs
     * Redis 7, and the embedded server may be older); ttl -1 or -2, as PTTL, for none.
     */
    private record Expiry(long ttl, long earliest, long latest) {

        static Expiry of(RedisCommands<String, String> redis, String key) {
            long before = System.currentTimeMillis();
            long ttl = redis.pttl(key);
            long after = System.currentTimeMillis();
            return new Expiry(ttl, before + ttl, after + ttl + 1);
        }
    }

    /**
     * A token bucket's fields but the rate it was written at ({@code r}), which the script keeps since issue 36 and the
     * reference predates: each key's limit is fixed here, so the rate never changes and {@code r} never decides.
     */
    private static Map<String, String> withoutRate(Map<String, String> fields) {
        Map<String, String> kept = new LinkedHashMap<>(fields);
        kept.remove("r");
        return kept;
    }

    /** Type, content in Redis's own order, and nothing of the clock. */
    private static String state(RedisCommands<String, String> redis, String key) {
        String type = redis.type(key);
        return type + " " + switch (type) {
            case "hash" -> withoutRate(redis.hgetall(key)).toString();
            case "zset" -> redis.zrangeWithScores(key, 0, -1).toString();
            case "string" -> redis.get(key);
            default -> "";
        };
    }

    private static String onPinnedClock(String script) {
        String pinned = script.replaceFirst("call\\('TIME'\\)", "call('HMGET', '" + CLOCK + "', 's', 'us')");
        assertThat(pinned).as("the script reads TIME once").isNotEqualTo(script).doesNotContain("'TIME'");
        return pinned;
    }

    /**
     * The buckets' TTLs as the script set them, key and TTL, in order. Permits' are left out: a permit set extends
     * its TTL only where PTTL says it ends sooner, which depends on the millisecond the script reads it in.
     */
    private static List<String> ttlsSet(RedisCommands<String, String> redis) {
        List<String> noted = redis.lrange(EXPIRES_SET, 0, -1);
        List<String> buckets = new ArrayList<>();
        for (int i = 0; i + 1 < noted.size(); i += 2) {
            if (!noted.get(i).startsWith("rl:c")) {
                buckets.addAll(noted.subList(i, i + 2));
            }
        }
        return buckets;
    }

    /** The script, noting each PEXPIRE it makes (key, then TTL) in {@link #EXPIRES_SET}. */
    private static String noting(String script) {
        String noting = script.replaceAll("redis\\.call\\('PEXPIRE', ([^,()]+), ([^,()]+)\\)",
                "redis.call('PEXPIRE', $1, $2) redis.call('RPUSH', '" + EXPIRES_SET + "', $1, $2)");
        assertThat(noting).as("the script sets TTLs with PEXPIRE").contains("'RPUSH', '" + EXPIRES_SET + "'");
        return noting;
    }

    private static String read(String resource) throws IOException {
        try (InputStream in = RateLimitScriptMatchesReferenceTest.class.getClassLoader()
                .getResourceAsStream(resource)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** One seed's calls: a small pool of buckets, each with its limit, and a clock that mostly moves forward. */
    private static final class Case {

        private final SplittableRandom random;
        private final Map<String, String[]> limits = new LinkedHashMap<>();
        private final List<String> keys = new ArrayList<>();
        private final List<String> arguments = new ArrayList<>();
        private final List<String> wrongTypes = new ArrayList<>();
        long seconds = 1_700_000_000L;
        long micros;

        Case(SplittableRandom random) {
            this.random = random;
            this.micros = random.nextLong(1_000_000);
            for (int i = 0; i < 3; i++) {
                // Small limits half the time, so that refusals (and what a refusal writes: repairs only) are common.
                long capacity = small();
                // A few buckets fill so slowly that their state could not be kept: the script refuses the call.
                double perSecond = random.nextInt(40) == 0 ? 1e-9 : capacity * 1_000.0 / random.nextLong(1, 120_000);
                limits.put("rl:t" + i, new String[] { "t", Long.toString(capacity), Double.toString(perSecond) });
                limits.put("rl:w" + i, new String[] { "w", Long.toString(small()),
                        Long.toString(random.nextLong(50, 120_000)) });
            }
            limits.put("rl:c0", new String[] { "c", Long.toString(random.nextLong(1, 4)),
                    Long.toString(random.nextLong(100, 60_000)) });
        }

        private long small() {
            return random.nextBoolean() ? random.nextLong(1, 6) : random.nextLong(1, 1_000);
        }

        List<String> pool() {
            return List.copyOf(limits.keySet());
        }

        /** The clock moves, and the next call is drawn. */
        void step() {
            long stepMicros = switch (random.nextInt(10)) {
                case 0 -> 0;
                case 1 -> -random.nextLong(1, 5_000_000); // a step back
                case 2 -> -random.nextLong(1, 10_000_000_000L); // far back: state far ahead of the clock
                case 3 -> random.nextLong(1, 300_000_000);
                default -> random.nextLong(1, 2_000_000);
            };
            long total = seconds * 1_000_000 + micros + stepMicros;
            seconds = total / 1_000_000;
            micros = total % 1_000_000;
            keys.clear();
            arguments.clear();
            wrongTypes.clear();
            arguments.add("1000");
            arguments.add(random.nextInt(8) == 0 ? Long.toString(random.nextLong(-3_000_000, 3_000_000)) : "0");
            long now = seconds * 1_000_000 + micros;
            arguments.add(switch (random.nextInt(12)) {
                case 0 -> Long.toString(now - 10_000_000); // stale: decides and writes nothing
                case 1 -> Long.toString(now + 10_000_000);
                default -> "0";
            });
            int requests = random.nextInt(1, 5);
            arguments.add(Integer.toString(requests));
            List<String> names = pool();
            for (int r = 0; r < requests; r++) {
                int checks = random.nextInt(1, 4);
                arguments.add(Integer.toString(checks));
                for (int c = 0; c < checks; c++) {
                    String key = names.get(random.nextInt(names.size()));
                    String[] limit = limits.get(key);
                    keys.add(key);
                    arguments.addAll(List.of(limit));
                    arguments.add(limit[0].equals("c") ? "permit-" + random.nextInt(4) : Integer.toString(
                            random.nextInt(4) == 0 ? random.nextInt(1, random.nextBoolean() ? 4 : 1_200) : 1));
                    arguments.add(random.nextInt(6) == 0 ? "1" : "0");
                    if (random.nextInt(30) == 0) {
                        wrongTypes.add(key);
                    }
                }
            }
        }

        String[] keys() {
            return keys.toArray(String[]::new);
        }

        String[] arguments() {
            return arguments.toArray(String[]::new);
        }

        /** Keys of another type than their check expects, as a hand or an older limiter may have left them. */
        void plantWrongTypes(RedisCommands<String, String> redis) {
            for (String key : wrongTypes) {
                redis.del(key);
                if (key.startsWith("rl:c")) {
                    redis.hset(key, "t", "1");
                }
                else {
                    redis.zadd(key, 1, "x");
                }
            }
        }
    }
}
