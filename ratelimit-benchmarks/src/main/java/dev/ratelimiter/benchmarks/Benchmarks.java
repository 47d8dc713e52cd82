package dev.ratelimiter.benchmarks;

import java.time.Duration;
import java.util.Arrays;

import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the benchmarks and prints one report: {@code java -jar ratelimit-benchmarks/target/benchmarks.jar}
 * (add {@code quick} for a short run, {@code no-jmh} to skip the JMH part). JMH for the in-process decision (throughput and allocation, local vs exact),
 * a load run through a gateway (limiter off, exact, local), and heap per tracked key.
 */
public final class Benchmarks {

    private Benchmarks() {
    }

    public static void main(String[] args) throws RunnerException {
        boolean quick = Arrays.asList(args).contains("quick");
        if (!Arrays.asList(args).contains("no-jmh")) {
            runJmh(quick);
        }

        long[] memory = LocalMemory.measure(200_000);
        System.out.printf("%nHeap per tracked key: %d bytes (local-mode share), %d bytes (local bucket)%n%n",
                memory[0], memory[1]);

        GatewayLoadRun.print(GatewayLoadRun.run(Duration.ofSeconds(quick ? 3 : 10), Duration.ofSeconds(quick ? 5 : 20),
                32, 2));
    }

    private static void runJmh(boolean quick) throws RunnerException {
        Options options = new OptionsBuilder()
                .include(DecisionBenchmark.class.getSimpleName())
                .forks(1)
                .warmupIterations(quick ? 1 : 3)
                .warmupTime(TimeValue.seconds(quick ? 2 : 5))
                .measurementIterations(quick ? 2 : 5)
                .measurementTime(TimeValue.seconds(quick ? 2 : 5))
                .addProfiler("gc")
                .build();
        new Runner(options).run();
    }
}
