package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bounded in-memory queue between the request path and the event sinks. {@link #offer} never waits: when the
 * queue is full the event is dropped and counted — telemetry is the one thing allowed to be lossy. One daemon thread
 * drains the queue in batches to every sink, so a slow or absent Kafka costs requests nothing.
 */
public final class EventQueue {

    private static final Logger logger = LoggerFactory.getLogger(EventQueue.class);
    private static final int BATCH = 512;

    /** How long an idle drainer rests: events wait at most this long before they reach the sinks. */
    static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    /** Lock-free: a bounded blocking queue takes a lock that a draining thread holds, and request threads wait on it. */
    private final Queue<DecisionEvent> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final int capacity;
    private final List<EventSink> sinks;
    private final AtomicLong queued = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong drained = new AtomicLong();
    private volatile Thread drainer;
    private volatile boolean running;

    public EventQueue(int capacity, List<EventSink> sinks) {
        if (capacity < 1) {
            throw new IllegalArgumentException("event queue capacity must be at least 1, but was " + capacity);
        }
        this.capacity = capacity;
        this.sinks = List.copyOf(sinks);
    }

    /** Queues an event, or drops and counts it when the queue is full. Never blocks. */
    public void offer(DecisionEvent event) {
        if (size.incrementAndGet() <= capacity) {
            queue.offer(event);
            queued.incrementAndGet();
        }
        else {
            size.decrementAndGet();
            dropped.incrementAndGet();
        }
    }

    public synchronized void start() {
        if (drainer == null) {
            running = true;
            drainer = new Thread(this::drain, "ratelimit-events");
            drainer.setDaemon(true);
            drainer.start();
        }
    }

    /** {@link #stop(Duration)} within two seconds: what the application context calls on shutdown. */
    public void stop() {
        stop(Duration.ofSeconds(2));
    }

    /** Stops draining after handing what is queued to the sinks, waiting at most {@code timeout}; closes the sinks. */
    public synchronized void stop(Duration timeout) {
        Thread thread = drainer;
        if (thread == null) {
            return;
        }
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(timeout.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        drainer = null;
        sinks.forEach(EventSink::close);
    }

    private void drain() {
        List<DecisionEvent> batch = new ArrayList<>(BATCH);
        while (running || !queue.isEmpty()) {
            DecisionEvent event;
            while (batch.size() < BATCH && (event = queue.poll()) != null) {
                batch.add(event);
            }
            size.addAndGet(-batch.size());
            if (batch.isEmpty()) {
                if (!running) {
                    return;
                }
                // Not a blocking poll: a drainer waiting on the queue is woken by every offer, which under load is
                // a thread wake-up per request. Parked for a few milliseconds it takes them in batches instead, and
                // offer() signals nobody. stop() unparks it.
                LockSupport.parkNanos(IDLE_PARK_NANOS);
                continue;
            }
            deliver(batch);
            batch.clear();
        }
    }

    private void deliver(List<DecisionEvent> batch) {
        List<DecisionEvent> events = List.copyOf(batch);
        for (EventSink sink : sinks) {
            try {
                sink.accept(events);
            }
            catch (RuntimeException ex) {
                logger.warn("Event sink {} failed; {} events not delivered to it", sink, events.size(), ex);
            }
        }
        drained.addAndGet(events.size());
    }

    /** Events accepted into the queue since start. */
    public long queued() {
        return queued.get();
    }

    /** Events dropped because the queue was full. */
    public long dropped() {
        return dropped.get();
    }

    /** Events handed to the sinks. */
    public long drained() {
        return drained.get();
    }

    /** Events waiting in the queue now. */
    public int backlog() {
        return size.get();
    }

    public List<EventSink> sinks() {
        return sinks;
    }
}
