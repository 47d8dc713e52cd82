package dev.ratelimiter.testsupport;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedisRepliesTest {

    private static final String COMMAND_STATS = String.join("\r\n",
            "# Commandstats",
            "cmdstat_evalsha:calls=12,usec=340,usec_per_call=28.33,rejected_calls=0,failed_calls=1",
            "cmdstat_eval:calls=3,usec=90,usec_per_call=30.00",
            "cmdstat_client|setname:calls=2,usec=1,usec_per_call=0.50,rejected_calls=0,failed_calls=0",
            "");

    @Test
    void commandCallsAreReadFromCommandStats() {
        assertThat(RedisReplies.commandCalls(COMMAND_STATS, "evalsha")).isEqualTo(12);
        assertThat(RedisReplies.commandCalls(COMMAND_STATS, "EVAL")).isEqualTo(3);
        assertThat(RedisReplies.commandCalls(COMMAND_STATS, "client|setname")).isEqualTo(2);
        assertThat(RedisReplies.commandCalls(COMMAND_STATS, "fcall")).as("never called").isZero();
    }

    @Test
    void fieldValueArraysBecomeMaps() {
        assertThat(RedisReplies.pairs(List.of("name", "ratelimit", "num-slaves", "2")))
                .containsEntry("name", "ratelimit").containsEntry("num-slaves", "2").hasSize(2);
    }
}
