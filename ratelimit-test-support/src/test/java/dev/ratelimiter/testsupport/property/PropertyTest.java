package dev.ratelimiter.testsupport.property;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/** The runner: edge cases first, one sequence per seed, sizes ramping up, failures that name their seed and index. */
class PropertyTest {

    /** Set only while a test of this class runs {@link SampleProperties} through the JUnit Platform. */
    private static final String LAUNCHED = "ratelimit.property-test.launched";

    @Test
    void edgeCasesComeFirstThenRandomValues() {
        Property<Integer> property = Property.forAll(Gen.ints(0, 1_000_000)).tries(100);
        assertThat(IntStream.range(0, 4).mapToObj(i -> property.valueAt(14, i)))
                .containsExactly(0, 1_000_000, 1, 999_999);
        assertThat(IntStream.range(4, 100).mapToObj(i -> property.valueAt(14, i)).distinct()).hasSizeGreaterThan(90);
    }

    @Test
    void edgeCasesTakeAtMostAQuarterOfTheTries() {
        Property<Integer> property = Property.forAll(Gen.ints(-5, 5)).tries(8);
        assertThat(List.of(property.valueAt(14, 0), property.valueAt(14, 1))).containsExactly(-5, 5);
        assertThat(IntStream.range(2, 8).mapToObj(i -> property.valueAt(14, i))).allMatch(v -> v >= -5 && v <= 5);
    }

    @Test
    void theSameSeedGivesTheSameValuesAndAnotherSeedOthers() {
        Gen<String> text = Gen.strings(Gen.anyChar(), 0, 50);
        Property<String> one = Property.forAll(text).tries(500);
        Property<String> two = Property.forAll(text).tries(500);
        List<String> first = IntStream.range(0, 500).mapToObj(i -> one.valueAt(14, i)).toList();
        assertThat(IntStream.range(0, 500).mapToObj(i -> two.valueAt(14, i))).containsExactlyElementsOf(first);
        // each try depends on its index alone: try 300 is the same asked out of order
        assertThat(two.valueAt(14, 300)).isEqualTo(first.get(300));
        List<String> other = IntStream.range(0, 500).mapToObj(i -> one.valueAt(15, i)).toList();
        assertThat(IntStream.range(100, 500).filter(i -> first.get(i).equals(other.get(i)))).hasSizeLessThan(20);
    }

    @Test
    void sizesRampUpOverTheFirstHalfOfTheTries() {
        Property<List<Integer>> property = Property.forAll(Gen.ints(0, 9).list(0, 1_000)).tries(1_000);
        double early = IntStream.range(10, 60).map(i -> property.valueAt(14, i).size()).average().orElseThrow();
        double late = IntStream.range(500, 1_000).map(i -> property.valueAt(14, i).size()).average().orElseThrow();
        assertThat(early).isLessThan(30);
        assertThat(late).isBetween(400.0, 600.0);
    }

    @Test
    void aFailingTryStopsTheRunAndIsReplayedAsATestNamedBySeedAndIndex() {
        Map<String, TestExecutionResult> results = launch(Map.of());
        // the edge cases 0 and 1000 come first: 1000, the second try, fails
        assertThat(results).containsOnlyKeys("seed=14: 200 tries (4 edge cases first)", "seed=14 #1 (edge): 1000",
                "everyValueIsBelow990()", "PropertyTest$SampleProperties", "JUnit Jupiter");
        for (String name : List.of("seed=14: 200 tries (4 edge cases first)", "seed=14 #1 (edge): 1000")) {
            TestExecutionResult failed = results.get(name);
            assertThat(failed.getStatus()).as(name).isEqualTo(TestExecutionResult.Status.FAILED);
            assertThat(failed.getThrowable().orElseThrow()).as(name).hasMessageStartingWith(
                    "property failed at seed=14 #1 (replay: -Dratelimit.seed=14 -Dratelimit.case=1) for 1000: ")
                    .hasMessageContaining("to be less than");
        }
        assertThat(SampleProperties.tried).as("no try after the failing one").containsExactly(0, 1000, 1000);
    }

    @Test
    void aTryWhoseValueCannotBeGeneratedNamesItsSeedAndIndex() {
        Property<Integer> never = Property.forAll(Gen.ints(0, 10).filter(v -> v > 10)).tries(10);
        DynamicTest everyTry = never.check(value -> { }).findFirst().orElseThrow();
        assertThatThrownBy(() -> everyTry.getExecutable().execute()).isInstanceOf(AssertionError.class)
                .hasMessageStartingWith("no value for seed=14 #0: the filter discarded 1000 values in a row");
    }

    @Test
    void aSeedAndAnIndexReplayOneTry() {
        Map<String, TestExecutionResult> results = launch(Map.of(Property.SEED, "99", Property.CASE, "1"));
        assertThat(results.keySet()).filteredOn(name -> name.startsWith("seed=")).containsExactly(
                "seed=99 #1 (edge): 1000");
        Map<String, TestExecutionResult> random = launch(Map.of(Property.CASE, "150"));
        String value = String.valueOf(Property.forAll(Gen.ints(0, 1_000)).tries(200).valueAt(14, 150));
        assertThat(random.keySet()).filteredOn(name -> name.startsWith("seed=")).containsExactly(
                "seed=14 #150: " + value);
    }

    @Test
    void aPassingRunIsOneTestAndCoverageIsAssertedAfterIt() {
        Map<String, TestExecutionResult> results = launch(Map.of(LAUNCHED + ".coverage", "true"));
        assertThat(results.keySet()).filteredOn(name -> name.startsWith("seed=")).containsExactly(
                "seed=14: 200 tries (4 edge cases first)", "seed=14 coverage");
        assertThat(results.get("seed=14: 200 tries (4 edge cases first)").getStatus())
                .isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
        assertThat(results.get("seed=14 coverage").getStatus()).isEqualTo(TestExecutionResult.Status.FAILED);
        assertThat(results.get("seed=14 coverage").getThrowable().orElseThrow().getMessage())
                .startsWith("coverage at seed=14 was {even=").contains("odd=");
    }

    /** Runs {@link SampleProperties} on the JUnit Platform with these system properties; each test's result by name. */
    private static Map<String, TestExecutionResult> launch(Map<String, String> properties) {
        Map<String, TestExecutionResult> results = new java.util.LinkedHashMap<>();
        List<String> set = new ArrayList<>(properties.keySet());
        set.add(LAUNCHED);
        SampleProperties.tried.clear();
        properties.forEach(System::setProperty);
        System.setProperty(LAUNCHED, "true");
        try {
            LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                    .selectors(selectClass(SampleProperties.class)).build();
            LauncherFactory.create().execute(request, new TestExecutionListener() {
                @Override
                public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                    results.put(test.getDisplayName(), result);
                }
            });
        }
        finally {
            set.forEach(System::clearProperty);
        }
        return results;
    }

    /** Properties run by the tests above, not by the build. */
    @EnabledIfSystemProperty(named = LAUNCHED, matches = "true")
    static class SampleProperties {

        /** The values tried in the last launch, replays included. */
        static final List<Integer> tried = new ArrayList<>();

        @TestFactory
        Stream<DynamicTest> everyValueIsBelow990() {
            if (Boolean.getBoolean(LAUNCHED + ".coverage")) {
                return Property.forAll(Gen.ints(0, 1_000)).tries(200)
                        .coverage(coverage -> assertThat(coverage.percent("even")).isGreaterThan(90))
                        .check((value, coverage) -> coverage.collect(value % 2 == 0 ? "even" : "odd"));
            }
            return Property.forAll(Gen.ints(0, 1_000)).tries(200).check(value -> {
                tried.add(value);
                assertThat(value).isLessThan(990);
            });
        }
    }
}
