package dev.ratelimiter.helm.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the real helm (see {@link HelmBinary}) against the chart in {@code helm/ratelimit-gateway}. */
public final class Helm {

    /** The release name the tests render with. */
    public static final String RELEASE = "gw";

    /** The full name of the release's objects. */
    public static final String FULLNAME = RELEASE + "-ratelimit-gateway";

    private Helm() {
    }

    /** The chart directory, {@code helm/ratelimit-gateway} in the repository. */
    public static Path chart() {
        return existing(System.getProperty("ratelimit.helm.chart", "../helm/ratelimit-gateway"));
    }

    /** An example values file of {@code helm/examples}. */
    public static Path example(String file) {
        return existing(System.getProperty("ratelimit.helm.examples", "../helm/examples")).resolve(file);
    }

    /** A values file of this module's test resources ({@code src/test/resources/values}). */
    public static Path testValues(String file) {
        return existing("src/test/resources/values").resolve(file);
    }

    private static Path existing(String location) {
        Path path = Path.of(location).toAbsolutePath().normalize();
        if (!Files.isDirectory(path)) {
            throw new IllegalStateException(path + " does not exist (run the tests from the module directory)");
        }
        return path;
    }

    /** {@code helm lint --strict} on the chart with these values files. */
    public static Result lint(Path... valuesFiles) {
        List<String> args = new ArrayList<>(List.of("lint", "--strict", chart().toString()));
        for (Path values : valuesFiles) {
            args.add("--values");
            args.add(values.toString());
        }
        return run(args);
    }

    /** {@code helm template} of the chart with these values files, in namespace "gateway". */
    public static Result template(Path... valuesFiles) {
        List<String> args = new ArrayList<>(List.of("template", RELEASE, chart().toString(), "--namespace", "gateway"));
        for (Path values : valuesFiles) {
            args.add("--values");
            args.add(values.toString());
        }
        return run(args);
    }

    /** {@code helm template} that must succeed: its manifests. */
    public static Manifests render(Path... valuesFiles) {
        Result result = template(valuesFiles);
        if (result.exitCode() != 0) {
            throw new AssertionError("helm template failed (exit " + result.exitCode() + "):\n" + result.output());
        }
        return Manifests.parse(result.stdout());
    }

    public static Result run(List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(HelmBinary.get().toString());
        command.addAll(args);
        try {
            Path out = Files.createTempFile("helm", ".out");
            Path err = Files.createTempFile("helm", ".err");
            try {
                ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile())
                        .redirectError(err.toFile());
                // Helm keeps state in these; keep the user's own configuration out of the tests.
                Path home = helmHome();
                builder.environment().put("HELM_CONFIG_HOME", home.resolve("config").toString());
                builder.environment().put("HELM_CACHE_HOME", home.resolve("cache").toString());
                builder.environment().put("HELM_DATA_HOME", home.resolve("data").toString());
                Process process = builder.start();
                if (!process.waitFor(60, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    throw new AssertionError("helm did not finish within 60 s: " + command);
                }
                return new Result(command, process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                        Files.readString(err, StandardCharsets.UTF_8));
            }
            finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    private static Path home;

    private static synchronized Path helmHome() throws IOException {
        if (home == null) {
            home = Files.createTempDirectory("ratelimit-helm-home");
            home.toFile().deleteOnExit();
        }
        return home;
    }

    /** What one helm command did. */
    public record Result(List<String> command, int exitCode, String stdout, String stderr) {

        public String output() {
            return stdout + stderr;
        }
    }
}
