package dev.ratelimiter.redis;

import java.time.Duration;

import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

/** The instance count against a real Redis: joining, leaving, and leaving while Redis does not answer. */
class InstanceHeartbeatsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Test
    void twoInstancesCountEachOtherAndALeaverIsGoneAtOnce() {
        redis.command("FLUSHALL");
        try (TestConnection a = TestConnection.open(redis.host(), redis.port());
                TestConnection b = TestConnection.open(redis.host(), redis.port())) {
            InstanceHeartbeats first = new InstanceHeartbeats(a.connection(), new RedisKeys("rl"), Duration.ofSeconds(5), 1);
            InstanceHeartbeats second = new InstanceHeartbeats(b.connection(), new RedisKeys("rl"), Duration.ofSeconds(5), 1);
            first.start();
            second.start();
            assertThat(second.count()).isEqualTo(2);
            assertThat(second.fromStore()).isTrue();
            second.stop();
            assertThat(redis.command("ZCARD", "rl:{instances}")).isEqualTo("1");
            first.stop();
        }
    }

    @Test
    void leavingWhileRedisDoesNotAnswerNeitherFailsNorWaitsPastASecond() {
        redis.command("FLUSHALL");
        try (TestConnection connection = TestConnection.open(redis.host(), redis.port())) {
            InstanceHeartbeats heartbeats = new InstanceHeartbeats(connection.connection(), new RedisKeys("rl"),
                    Duration.ofSeconds(5), 1);
            heartbeats.start();
            redis.server().pause();
            try {
                long start = System.nanoTime();
                // a shutdown (the bean's destroy method) must not fail because Redis is slow to hear the leave
                assertThatNoException().isThrownBy(heartbeats::stop);
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
            }
            finally {
                redis.server().resume();
            }
        }
    }
}
