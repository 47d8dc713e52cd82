package dev.ratelimiter.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.Verdict;

/**
 * The fleet's traffic, in real time and open loop: a few driver threads each owe their part of the total rate from
 * the moment they start, and each decision goes to a random instance for a key drawn from the distribution — as a
 * load balancer spreads a client's requests over the gateways. A driver more than {@value #MAX_LAG_MILLIS} ms behind
 * drops what it owes beyond that (counted as skipped), rather than catching up in a burst the real fleet would not
 * send; answers are counted whenever they come, and at most {@value #MAX_IN_FLIGHT} decisions wait for Redis at once.
 */
final class FleetLoad {

    private static final long MAX_LAG_MILLIS = 50;
    private static final long MAX_IN_FLIGHT = 50_000;
    private static final long IDLE_PARK_NANOS = 100_000;

    private final List<FleetInstance> instances;
    private final List<List<Check>> checksByKey;
    private final KeyDistribution keys;
    private final boolean sticky;
    private final FleetTally tally;
    private final double perDriverPerSecond;
    private final List<Thread> drivers = new ArrayList<>();
    private final LongAdder inFlight = new LongAdder();
    private volatile boolean running;

    FleetLoad(List<FleetInstance> instances, List<List<Check>> checksByKey, KeyDistribution keys, FleetOptions options,
            FleetTally tally) {
        this.instances = List.copyOf(instances);
        this.checksByKey = checksByKey;
        this.keys = keys;
        this.sticky = options.sticky();
        this.tally = tally;
        this.perDriverPerSecond = options.simulatedRate() / options.drivers();
        for (int i = 0; i < options.drivers(); i++) {
            long seed = options.seed() * 1_000 + i;
            Thread driver = new Thread(() -> drive(new SplittableRandom(seed)), "fleet-driver-" + i);
            driver.setDaemon(true);
            drivers.add(driver);
        }
    }

    void start() {
        running = true;
        drivers.forEach(Thread::start);
    }

    /** Stops sending; decisions in flight still complete. */
    void stop() throws InterruptedException {
        running = false;
        for (Thread driver : drivers) {
            driver.join();
        }
    }

    /** Decisions sent and not answered yet. */
    long inFlight() {
        return inFlight.sum();
    }

    private void drive(SplittableRandom random) {
        double perNano = perDriverPerSecond / 1e9;
        long maxLag = Math.max(1, Math.round(perDriverPerSecond * MAX_LAG_MILLIS / 1000));
        long start = System.nanoTime();
        long sent = 0;
        while (running) {
            long due = (long) ((System.nanoTime() - start) * perNano);
            if (due - sent > maxLag) {
                tally.add(FleetTally.Count.SKIPPED, due - sent - maxLag);
                sent = due - maxLag;
            }
            if (sent < due && inFlight.sum() < MAX_IN_FLIGHT) {
                long batch = Math.min(due - sent, 64);
                for (long n = 0; n < batch; n++) {
                    decide(random);
                }
                sent += batch;
            }
            else {
                LockSupport.parkNanos(IDLE_PARK_NANOS);
            }
        }
    }

    private void decide(SplittableRandom random) {
        int key = keys.next(random);
        // sticky: as a load balancer hashing the API key would send it, always to the same instance
        FleetInstance instance = instances.get(sticky ? key % instances.size() : random.nextInt(instances.size()));
        List<Check> checks = checksByKey.get(key);
        inFlight.increment();
        tally.add(FleetTally.Count.MADE, 1);
        instance.store().evaluate(checks).subscribe(this::answered, this::failed);
    }

    private void answered(Verdict verdict) {
        inFlight.decrement();
        tally.verdict(verdict);
    }

    private void failed(Throwable failure) {
        inFlight.decrement();
        tally.add(FleetTally.Count.ERRORS, 1);
    }
}
