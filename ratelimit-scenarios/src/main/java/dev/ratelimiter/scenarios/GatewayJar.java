package dev.ratelimiter.scenarios;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/** Where the sample gateway's runnable (fat) jar is, so that the run can start it as a process of its own. */
final class GatewayJar {

    private GatewayJar() {
    }

    /** Finds the sample gateway's runnable jar: property {@code scenarios.gateway.jar}, else sample-gateway/target. */
    static Path locate() {
        String configured = System.getProperty("scenarios.gateway.jar", System.getenv("SCENARIOS_GATEWAY_JAR"));
        if (configured != null && !configured.isBlank()) {
            Path jar = Path.of(configured);
            if (!Files.isRegularFile(jar)) {
                throw new IllegalStateException("scenarios.gateway.jar=" + configured + " is not a file");
            }
            return jar;
        }
        for (String dir : List.of("sample-gateway/target", "../sample-gateway/target")) {
            Optional<Path> jar = findJar(Path.of(dir));
            if (jar.isPresent()) {
                return jar.get().toAbsolutePath().normalize();
            }
        }
        throw new IllegalStateException("No sample-gateway jar in sample-gateway/target or ../sample-gateway/target "
                + "(working directory " + Path.of("").toAbsolutePath() + "). Build it first: "
                + "./mvnw -pl sample-gateway -am package -DskipTests, or pass -Dscenarios.gateway.jar=<path>.");
    }

    /** The fat jar (over 1 MB: not the plain jar a repackaging leaves beside it), not the sources jar. */
    private static Optional<Path> findJar(Path dir) {
        if (!Files.isDirectory(dir)) {
            return Optional.empty();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().matches("sample-gateway.*\\.jar"))
                    .filter(p -> !p.getFileName().toString().contains("sources"))
                    .filter(p -> {
                        try {
                            return Files.size(p) > 1_000_000;
                        }
                        catch (IOException ex) {
                            return false;
                        }
                    })
                    .findFirst();
        }
        catch (IOException ex) {
            return Optional.empty();
        }
    }
}
