package dev.ratelimiter.scenarios;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Where a sample gateway's runnable (fat) jar is, so that the run can start it as a process of its own: the WebFlux
 * sample's or its Server MVC twin's, by {@link Flavour}.
 */
final class GatewayJar {

    private GatewayJar() {
    }

    /** The WebFlux sample's jar. */
    static Path locate() {
        return locate(Flavour.WEBFLUX);
    }

    /**
     * Finds {@code flavour}'s runnable jar: its property ({@code scenarios.gateway.jar}, {@code
     * scenarios.gateway-mvc.jar}) or environment variable, else {@code <module>/target} or {@code ../<module>/target}.
     */
    static Path locate(Flavour flavour) {
        String configured = System.getProperty(flavour.jarProperty, System.getenv(flavour.jarEnvironmentVariable()));
        if (configured != null && !configured.isBlank()) {
            Path jar = Path.of(configured);
            if (!Files.isRegularFile(jar)) {
                throw new IllegalStateException(flavour.jarProperty + "=" + configured + " is not a file");
            }
            return jar;
        }
        String target = flavour.module + "/target";
        for (String dir : List.of(target, "../" + target)) {
            Optional<Path> jar = findJar(Path.of(dir), flavour.module);
            if (jar.isPresent()) {
                return jar.get().toAbsolutePath().normalize();
            }
        }
        throw new IllegalStateException("No " + flavour.module + " jar in " + target + " or ../" + target
                + " (working directory " + Path.of("").toAbsolutePath() + "). Build it first: "
                + "./mvnw -pl " + flavour.module + " -am package -DskipTests, or pass -D" + flavour.jarProperty
                + "=<path>.");
    }

    /** The fat jar (over 1 MB: not the plain jar a repackaging leaves beside it), not the sources jar. */
    private static Optional<Path> findJar(Path dir, String module) {
        if (!Files.isDirectory(dir)) {
            return Optional.empty();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().matches(Pattern.quote(module) + "(-[0-9].*)?\\.jar"))
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
