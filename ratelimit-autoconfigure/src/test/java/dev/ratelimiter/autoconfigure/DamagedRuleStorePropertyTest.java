package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.ratelimiter.autoconfigure.rules.PropertyRuleDefinitions;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisRuleStore;
import dev.ratelimiter.redis.TestConnection;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;
import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import static dev.ratelimiter.testsupport.property.Gen.weighted;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whatever the Redis rule store holds — a spec written by hand with any names and values, a key of another type, a
 * version that is not a number — on a real Redis, through the real scripts: the sync never takes the store for
 * unreachable, the valid runtime rules stay in force (on an instance that was running and on one started now), and
 * the kill switch can be set and cleared. Before, an empty value bound to a null and the sync gave up (kill switch
 * ignored), and a key of another type made every read and write of the rules fail.
 */
class DamagedRuleStorePropertyTest {

    private static final String SPECS = "rl:{rules}:specs";
    private static final String CONTROL = "rl:{rules}:control";
    private static final String VERSION = "rl:{rules}:version";

    private static RedisServer redis;
    private static TestConnection connection;

    @BeforeAll
    static void start() {
        redis = RedisServers.start();
        connection = TestConnection.open(redis.host(), redis.port());
    }

    @AfterAll
    static void stop() {
        connection.close();
        redis.close();
    }

    /** What an edit by hand, another tool or another limiter version can leave in the store. */
    record Damage(String kind, List<String> lines) {

        void applyTo(RedisServer redis) {
            switch (kind) {
                case "spec" -> redis.command("HSET", SPECS, "broken", String.join("\n", lines) + "\n");
                case "specs-string" -> replace(redis, SPECS, "SET", SPECS, "garbage");
                case "specs-list" -> replace(redis, SPECS, "RPUSH", SPECS, "a", "b");
                case "control-string" -> replace(redis, CONTROL, "SET", CONTROL, "on");
                case "control-zset" -> replace(redis, CONTROL, "ZADD", CONTROL, "1", "kill-switch");
                case "version-text" -> redis.command("SET", VERSION, lines.isEmpty() ? "" : lines.get(0));
                case "version-hash" -> replace(redis, VERSION, "HSET", VERSION, "v", "1");
                default -> throw new IllegalArgumentException(kind);
            }
            redis.command("PUBLISH", "rl:rules:changed", "999");
        }

        /** A key of another type in place of {@code key}. */
        private static void replace(RedisServer redis, String key, String... command) {
            redis.command("DEL", key);
            redis.command(command);
        }

        boolean losesSpecs() {
            return kind.startsWith("specs-");
        }
    }

    @TestFactory
    Stream<DynamicTest> theKillSwitchAndTheValidRulesSurviveAnyDamage() {
        return Property.forAll(damage()).tries(300).check(DamagedRuleStorePropertyTest::survives);
    }

    private static void survives(Damage damage) {
        redis.command("FLUSHALL");
        RuleStore store = new RedisRuleStore(connection.connection(), new RedisKeys("rl"));
        RuleSetFactory factory = new RuleSetFactory(new PropertyRuleDefinitions(new RateLimitProperties()));
        store.putRule("keep", Map.of("capacity", "3", "refill-tokens", "1", "refill-period", "1h",
                "match.api-keys[0]", "abuser"), RuleStore.ANY_VERSION).block(Duration.ofSeconds(5));
        RuleSync running = sync(store, factory);
        assertThat(running.rulesInForce().rules()).containsKey("keep");

        damage.applyTo(redis);
        RuleSync fresh = sync(store, factory);
        running.refresh().block(Duration.ofSeconds(5));

        for (RuleSync instance : List.of(running, fresh)) {
            assertThat(instance.status().state()).as("%s after %s", instance.status(), damage)
                    .isNotEqualTo(RuleSync.State.STORE_UNREACHABLE);
        }
        assertThat(running.rulesInForce().rules()).as("rules in force on a running instance after " + damage)
                .containsKey("keep");
        if (!damage.losesSpecs()) {
            assertThat(fresh.rulesInForce().rules()).as("rules in force on an instance started after " + damage)
                    .containsKey("keep");
        }

        for (boolean on : new boolean[] { true, false }) {
            store.putControl("kill-switch", String.valueOf(on)).block(Duration.ofSeconds(5));
            for (RuleSync instance : List.of(running, fresh)) {
                instance.refresh().block(Duration.ofSeconds(5));
                assertThat(instance.rulesInForce().killSwitch()).as("kill switch %s after %s: %s", on, damage,
                        instance.status()).isEqualTo(on);
            }
        }
    }

    private static RuleSync sync(RuleStore store, RuleSetFactory factory) {
        RuleSync sync = new RuleSync(store, factory, new RuleSetHolder(factory.configured()), Duration.ofHours(1));
        sync.refresh().block(Duration.ofSeconds(5));
        return sync;
    }

    private static Gen<Damage> damage() {
        Gen<String> names = Gen.elements("algorithm", "capacity", "refill-tokens", "refill-period", "limit",
                "window", "max-in-progress", "lease", "key[0]", "key[1]", "key[7]", "key", "match.tiers[0]",
                "match.api-keys[0]", "match.route-ids[0]", "match.methods[0]", "match.paths[0]", "group", "cost",
                "shards", "enabled", "store-mode", "failure-mode", "priority", "unknown-setting", "capacity.x",
                "match", "key[-1]", "key[99999999999]");
        Gen<String> values = Gen.oneOf(
                Gen.elements("", " ", "-1", "0", "1", "5", "1e3", "1.5", "9223372036854775807",
                        "9223372036854775808", "abc", "token-bucket", "concurrency", "sliding-window", "TOKEN_BUCKET",
                        "api-key", "route", "ip", "header:X-Tenant", "header:", "1h", "-1s", "0s", "400d", "true",
                        "false", "local", "exact", "open", "closed", "tier-default", "free", "\u00e9\u2603",
                        "x".repeat(5000)),
                Gen.strings(Gen.unicodeChar(), 0, 12));
        Gen<String> line = Gen.oneOf(Gen.zip(names, values, (name, value) -> name + "=" + value),
                Gen.strings(Gen.unicodeChar(), 0, 20));
        Gen<Damage> spec = line.list(0, 8).map(lines -> new Damage("spec", new ArrayList<>(lines)));
        Gen<Damage> version = Gen.elements("", "abc", "-5", "1e3", "1.5", "99999999999999999999", "7")
                .map(text -> new Damage("version-text", List.of(text)));
        Gen<Damage> types = Gen.elements("specs-string", "specs-list", "control-string", "control-zset",
                "version-hash").map(kind -> new Damage(kind, List.of()));
        return Gen.frequency(weighted(6, spec), weighted(1, version), weighted(2, types));
    }
}
