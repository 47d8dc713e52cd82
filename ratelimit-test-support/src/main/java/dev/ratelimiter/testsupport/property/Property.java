package dev.ratelimiter.testsupport.property;

import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;

/**
 * A property checked on many generated values, as JUnit 5 dynamic tests: return {@link #check} from a
 * {@code @TestFactory}. The {@linkplain Gen#edgeCases edge cases} come first, then random values whose size ramps up
 * over the first half of the tries and stays at the largest for the second. A try's value depends only on the seed and
 * its index, so a failing try is replayed at once as a test of its own, named {@code seed=14 #17: <the value>}, and
 * again on demand: {@code -Dratelimit.seed=14 -Dratelimit.case=17} (with {@code -Dtest=TheTest#theProperty}). The
 * seed is fixed ({@value #DEFAULT_SEED}) so that CI runs the same values every time; another seed explores others.
 *
 * <p>All tries run in one test, not one test each: a report of tens of thousands of passing tries (megabytes of
 * surefire XML per class, a fifth of the run spent reporting them) tells nothing that the one line does.
 *
 * <p>There is no shrinking: a failing value is reported as generated. The edge cases and the small early sizes are
 * what make the first failure found usually a small one.
 */
public final class Property<T> {

    /** The system property that sets the seed of every property in the run. */
    public static final String SEED = "ratelimit.seed";

    /** The system property that runs one try of each property: its index. */
    public static final String CASE = "ratelimit.case";

    public static final long DEFAULT_SEED = 14;

    /** As before: a property that does not say how many tries gets a thousand. */
    public static final int DEFAULT_TRIES = 1_000;

    private static final int LONGEST_NAME = 120;

    private final Gen<T> gen;
    private int tries = DEFAULT_TRIES;
    private Consumer<Coverage> coverageCheck;

    private Property(Gen<T> gen) {
        this.gen = gen;
    }

    public static <T> Property<T> forAll(Gen<T> gen) {
        return new Property<>(gen);
    }

    public Property<T> tries(int tries) {
        if (tries < 1) {
            throw new IllegalArgumentException("tries must be at least 1, was " + tries);
        }
        this.tries = tries;
        return this;
    }

    /**
     * Assertions on what the tries were, run as a last test named {@code seed=… coverage} once every try has passed
     * (not when one try is replayed alone). The property collects with {@link #check(Classified)}.
     */
    public Property<T> coverage(Consumer<Coverage> check) {
        this.coverageCheck = check;
        return this;
    }

    /** The property must hold for each value; the tests it gives are those of {@link #check(Classified)}. */
    public Stream<DynamicTest> check(Check<? super T> property) {
        return check((value, coverage) -> property.accept(value));
    }

    /**
     * The property also counting each value's class into the {@link Coverage}. The tests: one that runs every try
     * and stops at the first failure; then, if one failed, that try replayed alone as a test named for its seed,
     * index and value; else the {@linkplain #coverage coverage} assertions.
     */
    public Stream<DynamicTest> check(Classified<? super T> property) {
        long seed = seed();
        Integer only = onlyCase();
        List<T> edges = edges();
        String caller = caller();
        System.out.printf("%s: seed=%d, %d tries (%d edge cases first); replay: -D%s=%d -D%s=<index>%n", caller,
                seed, tries, edges.size(), SEED, seed, CASE);
        if (only != null) {
            return Stream.of(replay(seed, only, edges, property, null));
        }
        Coverage coverage = new Coverage();
        AtomicReference<Integer> failedAt = new AtomicReference<>();
        DynamicTest everyTry = DynamicTest.dynamicTest(
                "seed=" + seed + ": " + tries + " tries (" + edges.size() + " edge cases first)", () -> {
                    for (int index = 0; index < tries; index++) {
                        T value = generated(seed, index, edges);
                        try {
                            property.accept(value, coverage);
                        }
                        catch (Throwable failure) {
                            failedAt.set(index);
                            throw failure(seed, index, value, failure);
                        }
                    }
                });
        // Built only once every try has run: the stream is read as JUnit runs the tests it gives.
        Stream<DynamicTest> after = Stream.of(failedAt).flatMap(failed -> {
            if (failed.get() != null) {
                return Stream.of(replay(seed, failed.get(), edges, property, "failed in the run of every try"));
            }
            if (coverageCheck == null) {
                return Stream.empty();
            }
            return Stream.of(DynamicTest.dynamicTest("seed=" + seed + " coverage", () -> {
                System.out.printf("%s coverage: %s%n", caller, coverage);
                try {
                    coverageCheck.accept(coverage);
                }
                catch (AssertionError missed) {
                    throw new AssertionError("coverage at seed=" + seed + " was " + coverage + ": " + missed, missed);
                }
            }));
        });
        return Stream.concat(Stream.of(everyTry), after);
    }

    /** One try as a test of its own, named {@code seed=… #index: value}. */
    private DynamicTest replay(long seed, int index, List<T> edges, Classified<? super T> property, String failedIn) {
        T value = generated(seed, index, edges);
        String described = Gen.describe(value);
        String name = "seed=" + seed + " #" + index + (index < edges.size() ? " (edge)" : "") + ": "
                + (described.length() > LONGEST_NAME ? described.substring(0, LONGEST_NAME) + "…" : described);
        return DynamicTest.dynamicTest(name, () -> {
            try {
                property.accept(value, new Coverage());
            }
            catch (Throwable failure) {
                throw failure(seed, index, value, failure);
            }
            if (failedIn != null) {
                throw new AssertionError("seed=" + seed + " #" + index + " " + failedIn
                        + " but passed alone: the property depends on what earlier tries left behind");
            }
        });
    }

    private static AssertionError failure(long seed, int index, Object value, Throwable failure) {
        return new AssertionError("property failed at seed=" + seed + " #" + index + " (replay: -D" + SEED + "="
                + seed + " -D" + CASE + "=" + index + ") for " + Gen.describe(value) + ": " + failure, failure);
    }

    /** The value of a try, or an error naming the try whose value could not be generated. */
    private T generated(long seed, int index, List<T> edges) {
        try {
            return valueAt(seed, index, edges);
        }
        catch (RuntimeException ex) {
            throw new AssertionError("no value for seed=" + seed + " #" + index + ": " + ex.getMessage(), ex);
        }
    }

    /** The value of try {@code index}: an edge case, or a random value from a source seeded by seed and index alone. */
    T valueAt(long seed, int index, List<T> edges) {
        if (index < edges.size()) {
            return edges.get(index);
        }
        int position = index - edges.size();
        int randomTries = tries - edges.size();
        int size = (int) Math.min(Gen.MAX_SIZE, 1 + 2L * (Gen.MAX_SIZE - 1) * position / Math.max(1, randomTries));
        return gen.next(new Random(mix(seed, index)), size);
    }

    /** The value of try {@code index} at this seed, as a run would generate it. */
    public T valueAt(long seed, int index) {
        return valueAt(seed, index, edges());
    }

    /** The edge cases tried first: at most a quarter of the tries, so that most stay random. */
    private List<T> edges() {
        return gen.edgeCases().subList(0, Math.min(gen.edgeCases().size(), tries / 4));
    }

    /** SplitMix64's finaliser over seed and index: neighbouring indices get unrelated sources. */
    private static long mix(long seed, int index) {
        long z = seed + 0x9E3779B97F4A7C15L * (index + 1L);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static long seed() {
        String text = System.getProperty(SEED);
        if (text == null || text.isBlank()) {
            return DEFAULT_SEED;
        }
        try {
            return Long.parseLong(text.strip());
        }
        catch (NumberFormatException ex) {
            throw new IllegalArgumentException("-D" + SEED + " must be a whole number, was '" + text + "'", ex);
        }
    }

    private Integer onlyCase() {
        String text = System.getProperty(CASE);
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            int index = Integer.parseInt(text.strip());
            if (index >= 0 && index < tries) {
                return index;
            }
        }
        catch (NumberFormatException ex) {
            // reported below, with the range
        }
        throw new IllegalArgumentException("-D" + CASE + " must be a try's index from 0 to " + (tries - 1) + ", was '"
                + text + "'");
    }

    /** The test method that made this property: its class and name, for the line that says the seed. */
    private static String caller() {
        return StackWalker.getInstance().walk(frames -> frames
                .filter(frame -> !frame.getClassName().equals(Property.class.getName()))
                .findFirst().map(frame -> frame.getClassName().substring(frame.getClassName().lastIndexOf('.') + 1)
                        + "." + frame.getMethodName())
                .orElse("property"));
    }

    /** A property of one value. */
    @FunctionalInterface
    public interface Check<T> {
        void accept(T value) throws Throwable;
    }

    /** A property of one value that also says which class the value was of, for {@link #coverage}. */
    @FunctionalInterface
    public interface Classified<T> {
        void accept(T value, Coverage coverage) throws Throwable;
    }
}
