package dev.ratelimiter.redis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuntimeRules;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Runtime rules in Redis, shared by every instance: {@code <prefix>:{rules}:specs} (rule id to spec),
 * {@code <prefix>:{rules}:control} (switches) and {@code <prefix>:{rules}:version}, in one hash slot; changes are
 * announced on {@code <prefix>:rules:changed}. Specs are stored as {@code name=value} lines, readable with
 * {@code redis-cli HGETALL}. Reads and writes are scripts, so a reader never sees half a change.
 */
public final class RedisRuleStore implements RuleStore {

    private final ReactiveStringRedisTemplate redis;
    private final List<String> keys;
    private final String channel;
    private final RedisScript<Long> write;
    private final RedisScript<List<Object>> read;

    @SuppressWarnings({ "unchecked", "rawtypes" })
    public RedisRuleStore(ReactiveStringRedisTemplate redis, RedisKeys redisKeys) {
        this.redis = redis;
        String base = redisKeys.prefix() + ":{rules}:";
        this.keys = List.of(base + "specs", base + "control", base + "version");
        this.channel = redisKeys.prefix() + ":rules:changed";
        this.write = RedisScript.of(new ClassPathResource("META-INF/scripts/ratelimit/rules_write.lua"), Long.class);
        this.read = (RedisScript) RedisScript.of(new ClassPathResource("META-INF/scripts/ratelimit/rules_read.lua"),
                List.class);
    }

    @Override
    public Mono<RuntimeRules> load() {
        return redis.execute(read, keys, List.of()).collectList()
                .map(replies -> toRules(replies.size() == 1 ? replies.get(0) : List.copyOf(replies)));
    }

    @Override
    public Mono<Long> version() {
        return redis.opsForValue().get(keys.get(2)).map(Long::parseLong).defaultIfEmpty(0L);
    }

    @Override
    public Mono<Long> putRule(String id, Map<String, String> spec) {
        return write("put-rule", id, SpecFormat.write(spec));
    }

    @Override
    public Mono<Long> deleteRule(String id) {
        return write("delete-rule", id, "");
    }

    @Override
    public Mono<Long> putControl(String name, String value) {
        return write("put-control", name, value);
    }

    @Override
    public Flux<Long> changes() {
        return redis.listenToChannel(channel).map(message -> Long.parseLong(message.getMessage()));
    }

    private Mono<Long> write(String operation, String field, String value) {
        return redis.execute(write, keys, List.of(operation, field, value, channel)).next();
    }

    /** The script's reply: version, spec pairs, switch pairs. */
    @SuppressWarnings("unchecked")
    private static RuntimeRules toRules(List<?> parts) {
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
        return new RuntimeRules(version, specs, control);
    }
}
