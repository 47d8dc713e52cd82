package dev.ratelimiter.testsupport.property;

import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** The generators: their edge cases, their ranges, their determinism. */
class GenTest {

    @Test
    void numbersHaveTheirBoundsZeroAndOneAsEdgeCasesAndStayInRange() {
        assertThat(Gen.ints(-5, 5).edgeCases()).containsExactly(-5, 5, 0, 1, -1, -4, 4);
        assertThat(Gen.longs(3, 1_000_000_000L).edgeCases()).containsExactly(3L, 1_000_000_000L, 4L, 999_999_999L);
        Random random = new Random(1);
        assertThat(IntStream.range(0, 10_000).mapToObj(i -> Gen.ints(-5, 5).next(random, 1)).distinct())
                .containsExactlyInAnyOrder(-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5);
        Gen<Long> all = Gen.longs(Long.MIN_VALUE, Long.MAX_VALUE);
        assertThat(IntStream.range(0, 1_000).mapToObj(i -> all.next(random, 1)).anyMatch(v -> v < 0)).isTrue();
        assertThat(IntStream.range(0, 1_000).mapToObj(i -> Gen.doubles(0.01, 100).next(random, 1)))
                .allMatch(v -> v >= 0.01 && v <= 100);
    }

    @Test
    void listsAndStringsStartEmptyOrShortAndGrowWithTheSize() {
        assertThat(Gen.strings("ab", 0, 3).edgeCases()).containsExactly("", "a", "b", "aaa");
        assertThat(Gen.elements("x", "y", "z").list(1, 2).edgeCases())
                .containsExactly(List.of("x"), List.of("z"), List.of("x", "x"));
        Random random = new Random(2);
        Gen<String> text = Gen.strings(Gen.anyChar(), 0, 4096);
        assertThat(IntStream.range(0, 200).map(i -> text.next(random, 1).length()).max().getAsInt())
                .isLessThanOrEqualTo(41);
        assertThat(IntStream.range(0, 200).map(i -> text.next(random, Gen.MAX_SIZE).length()).max().getAsInt())
                .isGreaterThan(3_000);
    }

    @Test
    void oneOfTakesEachChoicesEdgeCasesInTurnAndMapsKeepDistinctKeys() {
        assertThat(Gen.oneOf(Gen.elements("a", "b"), Gen.elements("c", "d")).edgeCases())
                .containsExactly("a", "c", "b", "d");
        Random random = new Random(3);
        assertThat(IntStream.range(0, 500).mapToObj(i -> Gen.maps(Gen.elements("k", "l"), Gen.booleans(), 0, 7)
                .next(random, Gen.MAX_SIZE).size())).allMatch(size -> size <= 2).contains(0, 1, 2);
    }

    @Test
    void aFilterThatKeepsNothingFailsInsteadOfLooping() {
        Gen<Integer> never = Gen.ints(0, 10).filter(v -> v > 10);
        assertThat(never.edgeCases()).isEmpty();
        assertThatIllegalStateException().isThrownBy(() -> never.next(new Random(4), 1))
                .withMessageContaining("discarded 1000 values in a row");
    }

    @Test
    void theDefaultCharactersLeaveOutNoncharactersAndPrivateUseButNotSurrogates() {
        Random random = new Random(5);
        List<Character> chars = IntStream.range(0, 100_000).mapToObj(i -> Gen.unicodeChar().next(random, 1)).toList();
        assertThat(chars).noneMatch(c -> c >= '\ue000' && c <= '\uf8ff' || c >= '\ufdd0' && c <= '\ufdef'
                || c == '\ufffe' || c == '\uffff').anyMatch(Character::isSurrogate);
    }

    @Test
    void valuesAreDescribedReadably() {
        assertThat(Gen.describe("a\u0000b\ud800")).isEqualTo("\"a\\u0000b\\ud800\"");
        assertThat(Gen.describe(new double[] { 1.5, 2 })).isEqualTo("[1.5, 2.0]");
        assertThat(Gen.describe(new double[][] { { 1 } })).isEqualTo("[[1.0]]");
    }
}
