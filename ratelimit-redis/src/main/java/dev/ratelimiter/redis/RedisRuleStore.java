package dev.ratelimiter.redis;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuleStore.NotSentException;
import dev.ratelimiter.core.RuleStore.StaleVersionException;
import dev.ratelimiter.core.RuntimeRules;
import dev.ratelimiter.core.RuntimeRules.Part;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Runtime rules in Redis, shared by every instance: {@code <prefix>:{rules}:specs} (rule id to spec),
 * {@code <prefix>:{rules}:control} (switches) and {@code <prefix>:{rules}:version}, in one hash slot; changes are
 * announced on {@code <prefix>:rules:changed}. Specs are stored as {@code name=value} lines, readable with
 * {@code redis-cli HGETALL}. Reads and writes are scripts, so a reader never sees half a change.
 */
public final class RedisRuleStore implements RuleStore {

    private final LimiterConnection redis;
    private final String[] keys;
    private final String channel;

    public RedisRuleStore(LimiterConnection redis, RedisKeys redisKeys) {
        this.redis = redis;
        String base = redisKeys.prefix() + ":{rules}:";
        this.keys = new String[] { base + "specs", base + "control", base + "version" };
        this.channel = redisKeys.prefix() + ":rules:changed";
    }

    @Override
    public Mono<RuntimeRules> load() {
        return Replies.of(() -> redis.<List<Object>>script(LimiterScript.RULES_READ, ScriptOutputType.MULTI,
                keys)).map(this::toRules);
    }

    @Override
    public Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion) {
        return write("put-rule", id, SpecFormat.write(spec), expectedVersion);
    }

    @Override
    public Mono<Long> deleteRule(String id, long expectedVersion) {
        return write("delete-rule", id, "", expectedVersion);
    }

    @Override
    public Mono<Long> putControl(String name, String value) {
        return write("put-control", name, value, ANY_VERSION);
    }

    @Override
    public Flux<Long> changes() {
        return redis.messages(channel).map(Long::parseLong);
    }

    private Mono<Long> write(String operation, String field, String value, long expectedVersion) {
        return Replies.of(() -> redis.<Long>script(LimiterScript.RULES_WRITE, ScriptOutputType.INTEGER, keys,
                operation, field, value, channel, String.valueOf(expectedVersion)))
                .onErrorMap(RedisCommandExecutionException.class, failure -> stale(failure, expectedVersion))
                // the one failure known to come before the command left: the operator may be told nothing changed
                .onErrorMap(RedisRuleStore::notSent, failure -> new NotSentException(failure.getMessage(), failure));
    }

    private static boolean notSent(Throwable failure) {
        return failure instanceof LimiterConnection.NotConnectedException
                || failure.getCause() instanceof LimiterConnection.NotConnectedException;
    }

    /** The script refuses a stale write with {@code STALE <current version>}. */
    private static RuntimeException stale(RedisCommandExecutionException failure, long expectedVersion) {
        String message = failure.getMessage() == null ? "" : failure.getMessage().trim();
        if (message.startsWith("STALE ")) {
            return new StaleVersionException(expectedVersion, Long.parseLong(message.substring(6).trim()));
        }
        return failure;
    }

    /** The script's reply: version, spec pairs, switch pairs. */
    @SuppressWarnings("unchecked")
    private RuntimeRules toRules(List<?> parts) {
        long version = Long.parseLong(String.valueOf(parts.get(0)));
        Map<String, Map<String, String>> specs = new LinkedHashMap<>();
        List<Object> specPairs = (List<Object>) parts.get(1);
        for (int i = 0; i + 1 < specPairs.size(); i += 2) {
            specs.put(String.valueOf(specPairs.get(i)), SpecFormat.read(String.valueOf(specPairs.get(i + 1))));
        }
        Map<String, String> control = new LinkedHashMap<>();
        List<Object> controlPairs = (List<Object>) parts.get(2);
        for (int i = 0; i + 1 < controlPairs.size(); i += 2) {
            control.put(String.valueOf(controlPairs.get(i)), String.valueOf(controlPairs.get(i + 1)));
        }
        Map<Part, String> unreadable = new EnumMap<>(Part.class);
        List<Object> damaged = parts.size() > 3 ? (List<Object>) parts.get(3) : List.of();
        for (int i = 0; i + 1 < damaged.size(); i += 2) {
            String key = String.valueOf(damaged.get(i));
            unreadable.put(partOf(key), key + " holds " + damaged.get(i + 1));
        }
        return new RuntimeRules(version, specs, control, unreadable);
    }

    private Part partOf(String key) {
        return key.equals(keys[0]) ? Part.SPECS : key.equals(keys[1]) ? Part.CONTROL : Part.VERSION;
    }
}
