package dev.ratelimiter.benchmarks.sidebyside;

import java.util.HashMap;
import java.util.Map;

import dev.ratelimiter.testsupport.RedisServer;

/**
 * Redis's own count of what it did, from {@code INFO commandstats}: script calls (EVAL, EVALSHA and their read-only
 * forms: the round trips of the limiters that use scripts) and every command, commands inside scripts included.
 *
 * @param scriptCalls script calls
 * @param commands all commands
 * @param scriptMicros time Redis spent in script calls
 * @param cpuMicros CPU time of the Redis process, user and system ({@code INFO cpu}): on a machine it shares with the
 * gateway, taken from the gateway
 * @param calls calls of each command by its {@code commandstats} name ({@code hgetall}, {@code evalsha}), the
 * benchmark's own probes left out
 */
public record CommandStats(long scriptCalls, long commands, long scriptMicros, long cpuMicros, Map<String, Long> calls) {

    /** Nothing done: the start of a sum. */
    public static final CommandStats NONE = new CommandStats(0, 0, 0, 0, Map.of());

    public static CommandStats of(RedisServer redis) {
        long scripts = 0;
        long all = 0;
        long micros = 0;
        Map<String, Long> calls = new HashMap<>();
        for (String line : redis.command("INFO", "commandstats").split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String name = line.substring("cmdstat_".length(), line.indexOf(':'));
            String stats = line.substring(line.indexOf(':') + 1);
            long count = Long.parseLong(stats.split(",")[0].substring("calls=".length()));
            if (name.equals("info") || name.equals("config|resetstat") || name.startsWith("client|")) {
                continue; // the benchmark's own probes
            }
            calls.put(name, count);
            all += count;
            if (name.equals("eval") || name.equals("evalsha") || name.equals("eval_ro") || name.equals("evalsha_ro")) {
                scripts += count;
                micros += Long.parseLong(stats.split(",")[1].substring("usec=".length()));
            }
        }
        double cpuSeconds = 0;
        for (String line : redis.command("INFO", "cpu").split("\r?\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                cpuSeconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return new CommandStats(scripts, all, micros, Math.round(cpuSeconds * 1e6), Map.copyOf(calls));
    }

    /** Calls of one command ({@code commandstats} name, lower case), 0 when it never ran. */
    public long calls(String command) {
        return calls.getOrDefault(command, 0L);
    }

    public CommandStats minus(CommandStats before) {
        Map<String, Long> difference = new HashMap<>(calls);
        before.calls.forEach((command, count) -> difference.merge(command, -count, Long::sum));
        return new CommandStats(scriptCalls - before.scriptCalls, commands - before.commands,
                scriptMicros - before.scriptMicros, cpuMicros - before.cpuMicros, Map.copyOf(difference));
    }

    /** The sum of several servers' figures (the primaries of a cluster). */
    public CommandStats plus(CommandStats other) {
        Map<String, Long> sum = new HashMap<>(calls);
        other.calls.forEach((command, count) -> sum.merge(command, count, Long::sum));
        return new CommandStats(scriptCalls + other.scriptCalls, commands + other.commands,
                scriptMicros + other.scriptMicros, cpuMicros + other.cpuMicros, Map.copyOf(sum));
    }
}
