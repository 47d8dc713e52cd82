package dev.ratelimiter.redis;

import dev.ratelimiter.testsupport.RedisServerExtension;

/** Script calls a Redis has served (EVALSHA and EVAL), counted by Redis itself ({@code INFO commandstats}). */
final class ScriptCalls {

    private ScriptCalls() {
    }

    static long of(RedisServerExtension redis) {
        long calls = 0;
        for (String line : redis.command("INFO", "commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                calls += Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(',')));
            }
        }
        return calls;
    }
}
