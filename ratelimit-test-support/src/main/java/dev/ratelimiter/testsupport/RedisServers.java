package dev.ratelimiter.testsupport;

import java.nio.file.Files;
import java.nio.file.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;

/**
 * Starts a real Redis in the best way this machine allows, in a fixed order of preference:
 * <ol>
 * <li>a Testcontainers Redis when a Docker engine answers;</li>
 * <li>otherwise {@code redis-server} from {@code PATH}, as a child process;</li>
 * <li>otherwise the Redis binary shipped inside {@code com.github.codemonstur:embedded-redis}, run the same way.</li>
 * </ol>
 * Never a silent skip: if none of them works, starting fails with the reason.
 * The system property or environment variable {@code ratelimit.test.redis} / {@code RATELIMIT_TEST_REDIS}
 * ({@code container}, {@code path}, {@code embedded}) forces one choice.
 */
public final class RedisServers {

    private static final Logger logger = LoggerFactory.getLogger(RedisServers.class);
    private static final String IMAGE = "redis:7.4-alpine";
    private static Boolean dockerAvailable;

    private RedisServers() {
    }

    /** Starts a new server; the caller owns it and must close it. */
    public static RedisServer start() {
        RedisServer server = switch (RedisBinary.forcedChoice().orElseGet(RedisServers::bestChoice)) {
            case "container" -> new ContainerRedisServer(IMAGE);
            case "path" -> new ProcessRedisServer(RedisBinary.onPath().orElseThrow(
                    () -> new IllegalStateException("ratelimit.test.redis=path but no redis-server on PATH")), "PATH");
            case "embedded" -> new ProcessRedisServer(RedisBinary.embedded(), "embedded-redis");
            default -> throw new IllegalStateException("ratelimit.test.redis must be container, path or embedded");
        };
        logger.info("Started Redis for tests: {}", server.description());
        return server;
    }

    private static String bestChoice() {
        if (isDockerAvailable()) {
            return "container";
        }
        return RedisBinary.onPath().isPresent() ? "path" : "embedded";
    }

    private static synchronized boolean isDockerAvailable() {
        if (dockerAvailable == null) {
            String home = System.getProperty("user.home");
            if (System.getenv("DOCKER_HOST") == null && !Files.exists(Path.of("/var/run/docker.sock"))
                    && !Files.exists(Path.of(home, ".docker", "run", "docker.sock"))
                    && !Files.exists(Path.of(home, ".testcontainers.properties"))) {
                // No engine anywhere Testcontainers would look first: skip its probing and its error log.
                dockerAvailable = false;
                return false;
            }
            try {
                dockerAvailable = DockerClientFactory.instance().isDockerAvailable();
            }
            catch (RuntimeException | LinkageError ex) {
                dockerAvailable = false;
            }
        }
        return dockerAvailable;
    }
}
