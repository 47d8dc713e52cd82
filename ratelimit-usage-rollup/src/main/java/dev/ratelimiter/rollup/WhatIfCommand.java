package dev.ratelimiter.rollup;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.WhatIfReplay;
import dev.ratelimiter.kafka.DecisionEventRange;

/**
 * The what-if replay from the command line, beside the rollup that reads the same topic: the replay and the topic
 * reader of {@code POST /v1/rules/{id}/what-if}, for an operator without the management port (or with a range too large
 * for a gateway to read). The rule is given by flags, not a rule document: API-key overrides and paths are left out
 * (the events carry hashed ids and no path).
 *
 * <pre>
 * java -cp ratelimit-usage-rollup.jar dev.ratelimiter.rollup.WhatIfCommand --bootstrap-servers=localhost:9092 \
 *   --from=2026-12-01T00:00:00Z --to=2026-12-02T00:00:00Z --algorithm=token-bucket --capacity=20 \
 *   --refill-tokens=10 --refill-period=PT1M [--key=api-key] [--routes=search] [--tiers=free] [--route-classes=...]
 *   [--cost=1] [--scope=regional] [--traffic=arrivals|admitted] [--topic=ratelimit.decisions]
 *   [--max-events=2000000] [--timeout=PT2M] [--rows=1000]
 * </pre>
 *
 * Prints the report as JSON (the rules API's members); exits 0, 2 for a usage error, 3 when Kafka did not deliver.
 */
public final class WhatIfCommand {

    private static final Set<String> FLAGS = Set.of("bootstrap-servers", "topic", "from", "to", "algorithm",
            "capacity", "refill-tokens", "refill-period", "limit", "window", "key", "routes", "tiers", "route-classes",
            "cost", "scope", "traffic", "max-events", "timeout", "rows");

    private WhatIfCommand() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the command; the exit code. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        Map<String, String> flags;
        Rule rule;
        Instant from;
        Instant to;
        WhatIfReplay.Traffic traffic;
        try {
            flags = flags(args);
            rule = rule(flags);
            from = instant(flags, "from");
            to = instant(flags, "to");
            if (!to.isAfter(from)) {
                throw new IllegalArgumentException("--to must come after --from");
            }
            traffic = WhatIfReplay.Traffic.valueOf(flags.getOrDefault("traffic", "arrivals").toUpperCase(Locale.ROOT));
        }
        catch (IllegalArgumentException ex) {
            err.println("what-if: " + ex.getMessage());
            return 2;
        }
        WhatIfReplay replay = new WhatIfReplay(rule, ClientIdKeyring.unkeyed(), traffic);
        DecisionEventRange.Read read;
        try {
            DecisionEventRange range = new DecisionEventRange(required(flags, "bootstrap-servers"),
                    flags.getOrDefault("topic", "ratelimit.decisions"), Map.of());
            read = range.read(from, to, Long.parseLong(flags.getOrDefault("max-events", "2000000")),
                    Duration.parse(flags.getOrDefault("timeout", "PT2M")));
        }
        catch (DecisionEventRange.TooMany | DecisionEventRange.Unavailable ex) {
            err.println("what-if: " + ex.getMessage());
            return 3;
        }
        catch (IllegalArgumentException ex) {
            err.println("what-if: " + ex.getMessage());
            return 2;
        }
        read.events().forEach(replay::replay);
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("from", from.toString());
        report.put("to", to.toString());
        report.put("traffic", traffic.name().toLowerCase(Locale.ROOT));
        report.put("malformed", read.malformed());
        report.putAll(replay.report(20).members(Integer.parseInt(flags.getOrDefault("rows", "1000"))));
        out.println(Json.MAPPER.writeValueAsString(report));
        return 0;
    }

    private static Map<String, String> flags(String[] args) {
        Map<String, String> flags = new HashMap<>();
        for (String arg : args) {
            int equals = arg.indexOf('=');
            String name = arg.startsWith("--") && equals > 2 ? arg.substring(2, equals) : null;
            if (name == null || !FLAGS.contains(name)) {
                throw new IllegalArgumentException("'" + arg + "' is not one of --" + String.join("=…, --",
                        FLAGS.stream().sorted().toList()) + "=…");
            }
            flags.put(name, arg.substring(equals + 1));
        }
        return flags;
    }

    private static Rule rule(Map<String, String> flags) {
        String source = "what-if";
        try {
            Limit limit = switch (required(flags, "algorithm")) {
                case "token-bucket" -> TokenBucketLimit.of(source, number(flags, "capacity"),
                        number(flags, "refill-tokens"), duration(flags, "refill-period"));
                case "sliding-window" -> SlidingWindowLimit.of(source, number(flags, "limit"),
                        duration(flags, "window"));
                default -> throw new IllegalArgumentException("--algorithm is token-bucket or sliding-window (events "
                        + "do not record when a request ended, so concurrency cannot be replayed)");
            };
            List<Dimension> key = list(flags.getOrDefault("key", "api-key")).stream()
                    .map(name -> Dimension.valueOf(name.toUpperCase(Locale.ROOT).replace('-', '_'))).toList();
            Match match = new Match(Set.copyOf(list(flags.get("routes"))), List.of(),
                    Set.copyOf(list(flags.get("route-classes"))), Set.copyOf(list(flags.get("tiers"))), Set.of());
            Scope scope = Scope.valueOf(flags.getOrDefault("scope", "regional").toUpperCase(Locale.ROOT));
            return new Rule(source, source, match, key, limit, (int) Long.parseLong(flags.getOrDefault("cost", "0")),
                    Mode.ENFORCE, FailureMode.LOCAL, StoreMode.EXACT, 1, null, scope);
        }
        catch (InvalidLimitException ex) {
            throw new IllegalArgumentException(ex.getMessage());
        }
    }

    private static List<String> list(String value) {
        return value == null || value.isBlank() ? List.of()
                : Arrays.stream(value.split(",")).map(String::trim).filter(v -> !v.isEmpty()).toList();
    }

    private static String required(Map<String, String> flags, String name) {
        String value = flags.get(name);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return value;
    }

    private static long number(Map<String, String> flags, String name) {
        return Long.parseLong(required(flags, name));
    }

    private static Duration duration(Map<String, String> flags, String name) {
        return parsed(flags, name, Duration::parse, "an ISO-8601 duration (PT1M)");
    }

    private static Instant instant(Map<String, String> flags, String name) {
        return parsed(flags, name, Instant::parse, "an ISO-8601 instant (2026-12-01T00:00:00Z)");
    }

    private static <T> T parsed(Map<String, String> flags, String name, Function<String, T> parse, String form) {
        try {
            return parse.apply(required(flags, name));
        }
        catch (DateTimeParseException ex) {
            throw new IllegalArgumentException("--" + name + " is " + form + ", not '" + flags.get(name) + "'");
        }
    }
}
