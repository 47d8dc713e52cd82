package dev.ratelimiter.scenarios;

import dev.ratelimiter.testsupport.RedisServer;

/**
 * What the scenarios' Redis has done so far, read from its {@code INFO}; 0 while it is down, so that a scenario
 * that kills the store can still count around the outage.
 */
final class StoreCounters {

    private final RedisServer redis;

    StoreCounters(RedisServer redis) {
        this.redis = redis;
    }

    /** Script calls Redis has served (INFO commandstats: eval, evalsha and their read-only forms, fcall). */
    long scriptCalls() {
        long calls = 0;
        try {
            for (String line : redis.command("INFO", "commandstats").split("\r?\n")) {
                if (line.matches("cmdstat_(eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro):calls=\\d+.*")) {
                    calls += Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(',')));
                }
            }
        }
        catch (RuntimeException ex) {
            // the store is down: nothing to count
        }
        return calls;
    }

    /** Every command Redis has processed (INFO stats), the ones run inside scripts included. */
    long totalCommands() {
        try {
            String info = redis.command("INFO", "stats");
            for (String line : info.split("\r?\n")) {
                if (line.startsWith("total_commands_processed:")) {
                    return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
            }
        }
        catch (RuntimeException ex) {
            // the store is down: nothing to count
        }
        return 0;
    }
}
