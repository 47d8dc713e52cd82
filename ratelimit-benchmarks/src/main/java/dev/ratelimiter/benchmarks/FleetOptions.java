package dev.ratelimiter.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

import dev.ratelimiter.core.StoreStack;

/**
 * What {@link FleetSimulation} runs: the fleet, its load and how long. Defaults are the seeds' fleet (50 gateways ×
 * 2,000 requests/s over 10,000 active keys) with the product's defaults (settle every 100 ms, 5 ms store timeout).
 *
 * @param instances gateways, each with its own connection, store stack, settle loop and heartbeat
 * @param rate decisions per second per gateway
 * @param keys active clients (API keys), one token bucket each
 * @param warmup run before the measured window (shares granted, scripts loaded, JIT warm)
 * @param duration the measured window
 * @param modes store modes to run, each on its own fleet
 * @param topologies Redis topologies to run, each on its own servers
 * @param zipfExponent {@code 0}: every key equally likely; otherwise the key of rank r is drawn with weight
 * r^-exponent
 * @param drivers threads pacing the load
 * @param timeScale how many times slower than real the simulation runs: rates ÷ this, the settle and heartbeat
 * intervals and the bucket's refill period × this, so each settle interval sees the same traffic as the real fleet's;
 * every per-second figure is multiplied back by it (1: real time)
 * @param storeTimeout how long an exact decision waits for Redis once sent (the product's {@code store.timeout})
 * @param seed for keys and instances drawn
 * @param sticky whether each key's requests all go to one instance (a load balancer hashing the API key), else each
 * request to an instance drawn at random
 */
record FleetOptions(int instances, double rate, int keys, Duration warmup, Duration duration, List<Mode> modes,
        List<Topology> topologies, double zipfExponent, int drivers, double timeScale, Duration storeTimeout,
        long seed, boolean sticky) {

    /** The sample gateway's pro tier: a burst of 100, refilled at 50/s; the default load is 10/s per key. */
    static final long CAPACITY = 100;
    static final long REFILL_PER_SECOND = 50;
    /** As the default {@code ratelimit.store.heartbeat-interval}. */
    static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(5);

    enum Mode {
        LOCAL, EXACT
    }

    enum Topology {
        STANDALONE, CLUSTER
    }

    static final FleetOptions DEFAULTS = new FleetOptions(50, 2_000, 10_000, Duration.ofSeconds(10),
            Duration.ofSeconds(30), List.of(Mode.LOCAL, Mode.EXACT), List.of(Topology.STANDALONE, Topology.CLUSTER),
            0, 2, 1, StoreStack.DEFAULT_TIMEOUT, 1, false);

    FleetOptions {
        if (instances < 1 || rate <= 0 || keys < 1 || drivers < 1 || timeScale < 1 || zipfExponent < 0) {
            throw new IllegalArgumentException("instances, rate, keys and drivers must be positive, the time scale at "
                    + "least 1 and the zipf exponent not negative");
        }
    }

    /** {@code --name=value} options over {@link #DEFAULTS}. */
    static FleetOptions parse(String... args) {
        FleetOptions d = DEFAULTS;
        int instances = d.instances;
        double rate = d.rate;
        int keys = d.keys;
        Duration warmup = d.warmup;
        Duration duration = d.duration;
        List<Mode> modes = d.modes;
        List<Topology> topologies = d.topologies;
        String distribution = "uniform";
        double zipfExponent = 1.0;
        int drivers = d.drivers;
        double timeScale = d.timeScale;
        Duration storeTimeout = d.storeTimeout;
        long seed = d.seed;
        String routing = "random";
        for (String arg : args) {
            String[] pair = arg.replaceFirst("^--", "").split("=", 2);
            if (pair.length != 2) {
                throw new IllegalArgumentException("expected --name=value, got " + arg);
            }
            String value = pair[1].trim().toLowerCase(Locale.ROOT);
            switch (pair[0]) {
                case "instances" -> instances = Integer.parseInt(value);
                case "rate" -> rate = Double.parseDouble(value);
                case "keys" -> keys = Integer.parseInt(value);
                case "warmup" -> warmup = duration(value);
                case "duration" -> duration = duration(value);
                case "mode" -> modes = choice(Mode.class, value);
                case "topology" -> topologies = choice(Topology.class, value);
                case "distribution" -> distribution = value;
                case "zipf-exponent" -> zipfExponent = Double.parseDouble(value);
                case "drivers" -> drivers = Integer.parseInt(value);
                case "time-scale" -> timeScale = Double.parseDouble(value);
                case "store-timeout" -> storeTimeout = duration(value);
                case "seed" -> seed = Long.parseLong(value);
                case "routing" -> routing = value;
                default -> throw new IllegalArgumentException("unknown option " + arg);
            }
        }
        if (!distribution.equals("uniform") && !distribution.equals("zipf")) {
            throw new IllegalArgumentException("distribution is uniform or zipf, got " + distribution);
        }
        if (!routing.equals("random") && !routing.equals("sticky")) {
            throw new IllegalArgumentException("routing is random or sticky, got " + routing);
        }
        return new FleetOptions(instances, rate, keys, warmup, duration, modes, topologies,
                distribution.equals("zipf") ? zipfExponent : 0, drivers, timeScale, storeTimeout, seed,
                routing.equals("sticky"));
    }

    /** One of the constants by its lower-case name, or all of them for {@code both}. */
    private static <E extends Enum<E>> List<E> choice(Class<E> type, String value) {
        return value.equals("both") ? List.of(type.getEnumConstants())
                : List.of(Enum.valueOf(type, value.toUpperCase(Locale.ROOT)));
    }

    /** {@code 30s}, {@code 500ms}, {@code 2m}. */
    static Duration duration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
        }
        if (t.endsWith("s")) {
            return Duration.ofMillis(Math.round(Double.parseDouble(t.substring(0, t.length() - 1)) * 1000));
        }
        if (t.endsWith("m")) {
            return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)) * 60);
        }
        throw new IllegalArgumentException("a duration is like 30s, 500ms or 2m, got " + text);
    }

    /** Decisions per second asked of the whole simulated fleet, in the simulation's own (scaled) time. */
    double simulatedRate() {
        return instances * rate / timeScale;
    }

    /** The real fleet's settle interval (the product's default), in seconds. */
    static double settleIntervalSeconds() {
        return StoreStack.DEFAULT_SETTLE_INTERVAL.toNanos() / 1e9;
    }

    /** The settle interval of the simulated fleet, in its own time. */
    Duration settleInterval() {
        return scaled(StoreStack.DEFAULT_SETTLE_INTERVAL);
    }

    /** The product's settle silence, in the simulated fleet's own time. */
    Duration settleMaxSilence() {
        return scaled(StoreStack.DEFAULT_SETTLE_MAX_SILENCE);
    }

    Duration heartbeatInterval() {
        return scaled(HEARTBEAT_INTERVAL);
    }

    /** The refill period of the bucket: {@link #REFILL_PER_SECOND} tokens per (scaled) second. */
    Duration refillPeriod() {
        return scaled(Duration.ofSeconds(1));
    }

    private Duration scaled(Duration real) {
        return Duration.ofNanos(Math.round(real.toNanos() * timeScale));
    }

    /** The options as a command line, to re-run them. */
    String commandLine() {
        return String.format(Locale.ROOT, "--instances=%d --rate=%s --keys=%d --warmup=%dms --duration=%dms "
                + "--mode=%s --topology=%s --distribution=%s%s --drivers=%d --time-scale=%s --store-timeout=%dms "
                + "--seed=%d --routing=%s", instances, plain(rate), keys, warmup.toMillis(), duration.toMillis(),
                modes.size() == 2 ? "both" : modes.get(0).name().toLowerCase(Locale.ROOT),
                topologies.size() == 2 ? "both" : topologies.get(0).name().toLowerCase(Locale.ROOT),
                zipfExponent == 0 ? "uniform" : "zipf", zipfExponent == 0 ? "" : " --zipf-exponent="
                        + plain(zipfExponent), drivers, plain(timeScale), storeTimeout.toMillis(), seed,
                sticky ? "sticky" : "random");
    }

    private static String plain(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }
}
