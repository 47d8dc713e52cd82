package dev.ratelimiter.scenarios;

import java.nio.file.Path;

/**
 * One played scenario: the run, the store's work during it and the series files. {@code scriptCalls} are the
 * limiters' round trips (EVAL/EVALSHA, what both limiters decide with); {@code storeCommands} are every command
 * Redis processed, the ones run inside those scripts included.
 */
record Played(Load.Run run, long storeCommands, long scriptCalls, double seconds, Path csv, Path png) {
}
