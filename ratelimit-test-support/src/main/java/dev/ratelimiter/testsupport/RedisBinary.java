package dev.ratelimiter.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds a {@code redis-server} executable: the one on {@code PATH} if there is one, otherwise the binary
 * shipped inside the {@code com.github.codemonstur:embedded-redis} jar, extracted once per JVM.
 */
final class RedisBinary {

    /** A binary to run, and where it came from (for test logs). */
    record Choice(Path path, String kind) {
    }

    private static Path extracted;

    private RedisBinary() {
    }

    /**
     * The choice forced by the system property or environment variable {@code ratelimit.test.redis} /
     * {@code RATELIMIT_TEST_REDIS}, lower case, if one is set.
     */
    static Optional<String> forcedChoice() {
        String value = System.getProperty("ratelimit.test.redis", System.getenv("RATELIMIT_TEST_REDIS"));
        return Optional.ofNullable(value).filter(v -> !v.isBlank()).map(v -> v.trim().toLowerCase(Locale.ROOT));
    }

    /**
     * The binary for fixtures that can only run child processes (cluster, sentinel): {@code path} and
     * {@code embedded} are honoured as for a standalone server; with no choice, or {@code container} (a
     * topology of containers is not offered), {@code redis-server} from {@code PATH} if present, else embedded.
     */
    static Choice forProcesses() {
        String choice = forcedChoice().orElse("");
        return switch (choice) {
            case "path" -> new Choice(onPath().orElseThrow(() -> new IllegalStateException(
                    "ratelimit.test.redis=path but no redis-server on PATH")), "PATH");
            case "embedded" -> new Choice(embedded(), "embedded-redis");
            case "", "container" -> onPath().map(path -> new Choice(path, "PATH"))
                    .orElseGet(() -> new Choice(embedded(), "embedded-redis"));
            default -> throw new IllegalStateException("ratelimit.test.redis must be container, path or embedded");
        };
    }

    static Optional<Path> onPath() {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String directory : path.split(File.pathSeparator)) {
            Path candidate = Path.of(directory, "redis-server");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** The embedded-redis binary for this OS and architecture, extracted to a temporary file. */
    static synchronized Path embedded() {
        if (extracted != null) {
            return extracted;
        }
        String resource = embeddedResourceName();
        try (InputStream binary = RedisBinary.class.getClassLoader().getResourceAsStream(resource)) {
            if (binary == null) {
                throw new IllegalStateException("embedded-redis has no binary named " + resource
                        + "; install redis-server (e.g. apt-get install -y redis-server)");
            }
            Path file = Files.createTempFile("redis-server-", "");
            Files.copy(binary, file, StandardCopyOption.REPLACE_EXISTING);
            if (!file.toFile().setExecutable(true)) {
                throw new IllegalStateException("cannot make " + file + " executable");
            }
            file.toFile().deleteOnExit();
            extracted = file;
            return file;
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot extract the embedded Redis binary " + resource, ex);
        }
    }

    private static String embeddedResourceName() {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        boolean arm = arch.contains("aarch64") || arch.contains("arm64");
        if (os.contains("linux")) {
            return arm ? "redis-server-6.2.7-linux-arm64" : "redis-server-6.2.6-v5-linux-amd64";
        }
        if (os.contains("mac")) {
            return arm ? "redis-server-6.2.6-v5-darwin-arm64" : "redis-server-6.2.6-v5-darwin-amd64";
        }
        throw new IllegalStateException("no embedded Redis binary for " + os + "/" + arch
                + "; install redis-server or run with a Docker engine");
    }
}
