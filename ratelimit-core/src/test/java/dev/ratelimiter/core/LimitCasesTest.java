package dev.ratelimiter.core;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every algorithm answers its own {@link Limit.Cases} method through {@link Limit#match}, and there is one method per
 * algorithm: what lets the compiler list every handler when an algorithm is added. An algorithm added to
 * {@code Limit}'s {@code permits} without an example here fails {@link #oneExampleOfEveryAlgorithm()}.
 */
class LimitCasesTest {

    /** One limit of each algorithm, with the {@link Limit.Cases} method it must answer. */
    private static final Map<Limit, String> EXAMPLES = Map.of(
            TokenBucketLimit.of("t.", 10, 1, Duration.ofSeconds(1)), "tokenBucket",
            SlidingWindowLimit.of("w.", 10, Duration.ofMinutes(1)), "slidingWindow",
            ConcurrencyLimit.of("c.", 10, ConcurrencyLimit.DEFAULT_LEASE), "concurrency",
            CalendarQuotaLimit.of("q.", 10, "month", "Europe/Berlin", 15, null), "calendarQuota");

    /** Records which method ran, and with what. */
    private static final class Recording implements Limit.Cases<String> {

        final List<Limit> given = new ArrayList<>();

        @Override
        public String tokenBucket(TokenBucketLimit limit) {
            given.add(limit);
            return "tokenBucket";
        }

        @Override
        public String slidingWindow(SlidingWindowLimit limit) {
            given.add(limit);
            return "slidingWindow";
        }

        @Override
        public String concurrency(ConcurrencyLimit limit) {
            given.add(limit);
            return "concurrency";
        }

        @Override
        public String calendarQuota(CalendarQuotaLimit limit) {
            given.add(limit);
            return "calendarQuota";
        }
    }

    @Test
    void oneExampleOfEveryAlgorithm() {
        assertThat(EXAMPLES.keySet().stream().map(Object::getClass).collect(Collectors.toSet()))
                .as("an example of every class Limit permits").containsExactlyInAnyOrder(Limit.class.getPermittedSubclasses());
    }

    @Test
    void oneCasesMethodPerAlgorithm() {
        assertThat(casesMethods().map(Method::getName))
                .containsExactlyInAnyOrderElementsOf(EXAMPLES.values());
        for (Class<?> algorithm : Limit.class.getPermittedSubclasses()) {
            assertThat(casesMethods()
                    .filter(method -> Arrays.equals(method.getParameterTypes(), new Class<?>[] { algorithm })))
                    .as("the Cases method taking a %s", algorithm.getSimpleName()).hasSize(1);
        }
    }

    private static Stream<Method> casesMethods() {
        return Arrays.stream(Limit.Cases.class.getDeclaredMethods()).filter(method -> !method.isSynthetic());
    }

    @Test
    void eachAlgorithmAnswersItsOwnMethodWithItself() {
        EXAMPLES.forEach((limit, method) -> {
            Recording recording = new Recording();
            assertThat(limit.match(recording)).as(limit.toString()).isEqualTo(method);
            assertThat(recording.given).as("%s, given once and as itself", limit).containsExactly(limit);
        });
    }

    @Test
    void everyMethodIsAnsweredBySomeAlgorithm() {
        Recording recording = new Recording();
        assertThat(EXAMPLES.keySet().stream().map(limit -> limit.match(recording)))
                .containsExactlyInAnyOrder("tokenBucket", "slidingWindow", "concurrency", "calendarQuota");
        assertThat(recording.given).containsExactlyInAnyOrderElementsOf(EXAMPLES.keySet());
    }

    @Test
    void whatTheCoreAsksOfEachAlgorithm() {
        EXAMPLES.forEach((limit, method) -> {
            assertThat(limit.capsInProgress()).as("%s caps requests in progress", method)
                    .isEqualTo(method.equals("concurrency"));
            assertThat(limit.settlesLocally()).as("%s settles locally", method)
                    .isEqualTo(method.equals("tokenBucket"));
        });
    }

    @Test
    void theStateMadeForAnAlgorithmFitsItAndNoOther() {
        EXAMPLES.keySet().forEach(made -> {
            BucketState state = BucketState.create(made, 0);
            EXAMPLES.keySet().forEach(other -> assertThat(state.fits(other))
                    .as("state made for %s fits %s", made, other).isEqualTo(other.getClass() == made.getClass()));
        });
    }
}
