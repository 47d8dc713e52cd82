package dev.ratelimiter.mvc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Records JFR's {@code jdk.VirtualThreadPinned} events (a virtual thread that parked or blocked while it could not
 * let go of its carrier) between {@link #start()} and {@link #stop()}: the way to see pinning now that
 * {@code jdk.tracePinnedThreads} is gone (Java 24+). Read from a dump file after the recording stopped, so no event
 * still in a buffer is missed.
 */
final class PinnedVirtualThreads implements AutoCloseable {

    /** JFR's default threshold: a pin this long over a 100 ms wait would be the wait itself holding the carrier. */
    private static final Duration THRESHOLD = Duration.ofMillis(20);

    private final Recording recording = new Recording();

    static PinnedVirtualThreads start() {
        PinnedVirtualThreads pinned = new PinnedVirtualThreads();
        pinned.recording.enable("jdk.VirtualThreadPinned").withThreshold(THRESHOLD).withStackTrace();
        pinned.recording.start();
        return pinned;
    }

    /** Stops recording; one line per pinned wait (its duration and top frames), empty when nothing pinned. */
    List<String> stop() throws IOException {
        recording.stop();
        Path file = Files.createTempFile("virtual-thread-pinned", ".jfr");
        try {
            recording.dump(file);
            return RecordingFile.readAllEvents(file).stream().map(PinnedVirtualThreads::describe).toList();
        }
        finally {
            Files.deleteIfExists(file);
        }
    }

    private static String describe(RecordedEvent event) {
        String frames = event.getStackTrace() == null ? "no stack trace"
                : event.getStackTrace().getFrames().stream().limit(12).map(PinnedVirtualThreads::frame)
                        .collect(Collectors.joining(" < "));
        return event.getDuration().toMillis() + " ms: " + frames;
    }

    private static String frame(RecordedFrame frame) {
        return frame.getMethod().getType().getName() + "." + frame.getMethod().getName() + ":" + frame.getLineNumber();
    }

    @Override
    public void close() {
        recording.close();
    }
}
