package dev.ratelimiter.testsupport;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What the fast profile leaves out, decided from the class alone. */
class FastProfileTest {

    @Test
    void aPlainTestStays() {
        assertThat(FastProfile.slow(Plain.class)).isFalse();
        // Its helper classes hold servers, but they are no @Nested tests: this class stays.
        assertThat(FastProfile.slow(FastProfileTest.class)).isFalse();
    }

    @Test
    void aTestHoldingARealServerIsLeftOut() {
        assertThat(FastProfile.slow(HoldsRedis.class)).isTrue();
        assertThat(FastProfile.slow(HoldsTheExtension.class)).isTrue();
        assertThat(FastProfile.slow(HoldsAnUpstream.class)).isTrue();
    }

    @Test
    void soIsASubclassOfOneAndAClassWhoseNestedTestsHoldOne() {
        assertThat(FastProfile.slow(InheritsRedis.class)).isTrue();
        assertThat(FastProfile.slow(NestsOne.class)).isTrue();
    }

    @Test
    void wholeSystemRunsAreLeftOutByName() {
        assertThat(FastProfile.slow(SomethingIntegrationTest.class)).isTrue();
        assertThat(FastProfile.slow(SomethingSmokeTest.class)).isTrue();
        assertThat(FastProfile.slow(SomethingAccuracyTest.class)).isTrue();
        assertThat(FastProfile.slow(IntegrationTestsHelper.class)).isFalse();
    }

    static class Plain {
        int count;
    }

    static class HoldsRedis {
        RedisServer redis;
    }

    static class HoldsTheExtension {
        static RedisServerExtension redis;
    }

    static class HoldsAnUpstream {
        StubUpstream upstream;
    }

    static class InheritsRedis extends HoldsRedis {
    }

    static class NestsOne {
        @Nested
        class Inner {
            RedisCluster cluster;
        }
    }

    static class SomethingIntegrationTest {
    }

    static class SomethingSmokeTest {
    }

    static class SomethingAccuracyTest {
    }

    static class IntegrationTestsHelper {
    }
}
