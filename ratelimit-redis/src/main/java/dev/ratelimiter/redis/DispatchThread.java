package dev.ratelimiter.redis;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that hands the limiter's commands to Lettuce. Request threads only put a task in a lock-free queue
 * and, when this thread sleeps, wake it.
 *
 * <p>Lettuce serializes writers to a connection behind a lock, and holds that lock while it replays its buffer after
 * a reconnect: a command dispatched from a Netty event loop can wait there for as long as the replay takes, or for
 * another event loop in the middle of its own write. Dispatching from one thread of our own keeps every event loop
 * off that lock.
 */
final class DispatchThread {

    private static final Logger logger = LoggerFactory.getLogger(DispatchThread.class);

    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean sleeping;
    private volatile boolean stopped;

    DispatchThread(String name) {
        this.thread = new Thread(this::loop, name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Queues a task for the dispatch thread; never blocks. */
    void submit(Runnable task) {
        tasks.offer(task);
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    void stop() {
        stopped = true;
        LockSupport.unpark(thread);
    }

    private void loop() {
        while (!stopped) {
            boolean ran = false;
            for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
                run(task);
                ran = true;
            }
            if (ran) {
                continue;
            }
            // Announce the sleep before the last look at the queue: a task offered after that look sees it and wakes
            // this thread, one offered before it is found by the look.
            sleeping = true;
            if (tasks.isEmpty() && !stopped) {
                LockSupport.park(this);
            }
            sleeping = false;
        }
    }

    private static void run(Runnable task) {
        try {
            task.run();
        }
        catch (Throwable ex) {
            // Never let the one dispatching thread die: every later decision would wait for its timeout.
            logger.warn("A Redis command of the rate limiter could not be dispatched", ex);
        }
    }
}
