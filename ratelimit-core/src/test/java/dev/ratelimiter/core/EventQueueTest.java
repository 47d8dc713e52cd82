package dev.ratelimiter.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The bounded queue between requests and sinks: never blocks, drops and counts when full, drains in order. */
class EventQueueTest {

    @Test
    void aFullQueueDropsAndCountsWithoutWaitingForTheSink() throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        List<DecisionEvent> delivered = new ArrayList<>();
        EventSink stuck = events -> {
            try {
                release.await(10, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            synchronized (delivered) {
                delivered.addAll(events);
            }
        };
        EventQueue queue = new EventQueue(100, List.of(stuck));
        queue.start();
        long start = System.nanoTime();
        for (int i = 0; i < 1_000; i++) {
            queue.offer(event("client-" + i, DecisionEvent.Verdict.ALLOWED));
        }
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(tookMillis).as("1,000 offers against a stuck sink").isLessThan(1_000);
        assertThat(queue.queued() + queue.dropped()).isEqualTo(1_000);
        assertThat(queue.dropped()).as("at most the capacity plus the batch in the sink's hands is kept")
                .isGreaterThanOrEqualTo(1_000 - 100 - 512);
        release.countDown();
        queue.stop(Duration.ofSeconds(5));
        assertThat(delivered).hasSize((int) queue.queued());
        assertThat(delivered.get(0).client()).as("oldest first").isEqualTo("client-0");
    }

    @Test
    void aFailingSinkDoesNotStopTheOthers() {
        RecentDecisions recent = new RecentDecisions(10, 100);
        EventSink broken = events -> {
            throw new IllegalStateException("broken sink");
        };
        EventQueue queue = new EventQueue(100, List.of(broken, recent));
        queue.start();
        queue.offer(event("a", DecisionEvent.Verdict.DENIED));
        queue.stop(Duration.ofSeconds(5));
        assertThat(recent.latest(5)).extracting(DecisionEvent::client).containsExactly("a");
    }

    @Test
    void recentDecisionsKeepTheLatestAndRankTheMostDeniedClients() {
        RecentDecisions recent = new RecentDecisions(3, 100);
        List<DecisionEvent> events = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            events.add(event("noisy", DecisionEvent.Verdict.DENIED));
        }
        events.add(event("other", DecisionEvent.Verdict.DENIED));
        events.add(event("honest", DecisionEvent.Verdict.ALLOWED));
        events.add(event("watched", DecisionEvent.Verdict.SHADOW_DENIED));
        recent.accept(events);
        assertThat(recent.latest(10)).extracting(DecisionEvent::client).containsExactly("watched", "honest", "other");
        assertThat(recent.mostDenied(10)).containsExactly(java.util.Map.entry("noisy", 5L),
                java.util.Map.entry("other", 1L));
    }

    @Test
    void theJsonFormIsTheDocumentedSchema() {
        DecisionEvent event = new DecisionEvent(Instant.parse("2026-11-30T22:40:00.123Z"), "abc", "free", "api",
                "default", DecisionEvent.Verdict.SHED, "evaluated", "none", null, -1, -1, List.of(), "background",
                "reports", "gw-1", null);
        assertThat(DecisionEventJson.write(event)).isEqualTo("{\"schema\":1,\"time\":\"2026-11-30T22:40:00.123Z\","
                + "\"client\":\"abc\",\"tier\":\"free\",\"route\":\"api\",\"routeClass\":\"default\","
                + "\"verdict\":\"shed\",\"reason\":\"evaluated\",\"source\":\"none\",\"rules\":[],"
                + "\"priority\":\"background\",\"upstream\":\"reports\",\"instance\":\"gw-1\"}");
        DecisionEvent quoted = new DecisionEvent(Instant.EPOCH, null, "t\"1", "r\\2", "c\n", DecisionEvent.Verdict.DENIED,
                "evaluated", "store", "rule", 10, 0, List.of(new DecisionEvent.RuleResult("rule", false, 0, false)),
                null, null, "gw", "eu");
        assertThat(DecisionEventJson.write(quoted)).contains("\"tier\":\"t\\\"1\"", "\"route\":\"r\\\\2\"",
                "\"routeClass\":\"c\\u000a\"", "\"rules\":[{\"id\":\"rule\",\"allowed\":false,\"remaining\":0,"
                        + "\"shadow\":false}]").doesNotContain("\"client\"");
        assertThat(quoted.key()).as("no client: keyed by route").isEqualTo("route:r\\2");
    }

    private static DecisionEvent event(String client, DecisionEvent.Verdict verdict) {
        return new DecisionEvent(Instant.now(), client, "free", "api", "default", verdict, "evaluated", "store",
                "free.default", 10, 0, List.of(), null, null, "gw", null);
    }
}
