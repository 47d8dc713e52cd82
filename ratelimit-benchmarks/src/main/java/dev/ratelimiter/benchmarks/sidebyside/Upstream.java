package dev.ratelimiter.benchmarks.sidebyside;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.testsupport.StubUpstream;

/**
 * The API behind the gateway, answering {@code ok} as fast as it can: nginx (one worker) when it is installed, so that
 * the upstream costs the machine as little as possible; otherwise the Reactor Netty stub of the test support.
 */
final class Upstream implements AutoCloseable {

    private final Process nginx;
    private final StubUpstream stub;
    private final String uri;
    private final String description;

    private Upstream(Process nginx, StubUpstream stub, String uri, String description) {
        this.nginx = nginx;
        this.stub = stub;
        this.uri = uri;
        this.description = description;
    }

    static Upstream start(Path workDir, boolean preferNginx) {
        var binary = BenchGateway.onPath("nginx");
        if (preferNginx && binary.isPresent()) {
            int port = BenchGateway.freePort();
            try {
                Path dir = Files.createDirectories(workDir.resolve("nginx-" + port));
                Path conf = dir.resolve("nginx.conf");
                Files.writeString(conf, """
                        worker_processes 1;
                        daemon off;
                        pid %1$s/nginx.pid;
                        error_log %1$s/error.log warn;
                        events { worker_connections 1024; }
                        http {
                            access_log off;
                            client_body_temp_path %1$s/body;
                            proxy_temp_path %1$s/proxy;
                            fastcgi_temp_path %1$s/fastcgi;
                            uwsgi_temp_path %1$s/uwsgi;
                            scgi_temp_path %1$s/scgi;
                            keepalive_requests 1000000;
                            server {
                                listen 127.0.0.1:%2$d;
                                location / { default_type text/plain; return 200 "ok"; }
                            }
                        }
                        """.formatted(dir, port));
                Process process = new ProcessBuilder(binary.get().toString(), "-c", conf.toString(), "-p",
                        dir.toString()).redirectErrorStream(true).redirectOutput(dir.resolve("out.log").toFile())
                        .start();
                awaitPort(port, process);
                return new Upstream(process, null, "http://127.0.0.1:" + port, "nginx (1 worker) " + binary.get());
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
        StubUpstream stub = StubUpstream.start();
        return new Upstream(null, stub, stub.uri(), "Reactor Netty stub (nginx not installed)");
    }

    String uri() {
        return uri;
    }

    String description() {
        return description;
    }

    /** nginx's master process (its worker is a child), or empty when the upstream is the stub in this JVM. */
    java.util.Optional<ProcessHandle> process() {
        return nginx == null ? java.util.Optional.empty() : java.util.Optional.of(nginx.toHandle());
    }

    private static void awaitPort(int port, Process process) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("nginx exited at start");
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            }
            catch (IOException notYet) {
                BenchGateway.sleep(50);
            }
        }
        throw new IllegalStateException("nginx did not listen on " + port);
    }

    @Override
    public void close() {
        if (nginx != null) {
            nginx.destroy();
            try {
                nginx.waitFor(5, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
        if (stub != null) {
            stub.close();
        }
    }
}
