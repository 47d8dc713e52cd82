package dev.ratelimiter.gateway;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/** At ERROR at most once a minute, everything else at DEBUG, with the cause. */
class ThrottledLogTest {

    private final Logger logger = (Logger) LoggerFactory.getLogger(ThrottledLogTest.class);
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final AtomicLong now = new AtomicLong(1_000);

    @BeforeEach
    void capture() {
        logger.setLevel(Level.DEBUG);
        appender.start();
        logger.addAppender(appender);
    }

    @AfterEach
    void release() {
        logger.detachAppender(appender);
    }

    @Test
    void onceAMinuteAtErrorTheRestAtDebug() {
        ThrottledLog log = new ThrottledLog(logger, now::get);
        IllegalStateException cause = new IllegalStateException("a bug");
        for (int i = 0; i < 5; i++) {
            log.error("failed {}", i, cause);
            now.addAndGet(TimeUnit.SECONDS.toNanos(10));
        }
        now.addAndGet(TimeUnit.SECONDS.toNanos(15));
        log.error("failed {}", 5, cause);
        assertThat(appender.list).extracting(ILoggingEvent::getLevel).containsExactly(Level.ERROR, Level.DEBUG,
                Level.DEBUG, Level.DEBUG, Level.DEBUG, Level.ERROR);
        assertThat(appender.list.get(0).getFormattedMessage()).isEqualTo("failed 0 (said at most once a minute; the "
                + "others at DEBUG)");
        assertThat(appender.list.get(0).getThrowableProxy().getMessage()).isEqualTo("a bug");
        assertThat(appender.list.get(5).getFormattedMessage()).startsWith("failed 5");
    }
}
