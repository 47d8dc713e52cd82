package dev.ratelimiter.benchmvc;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The side-by-side benchmark's Gateway Server MVC gateway: the WebFlux bench gateway's two routes ({@code /bench/**}
 * and {@code /deny/**} to {@code bench.upstream}, from {@code application.yml}), on Tomcat with platform threads (the
 * default), our limiter off or on by {@code ratelimit.enabled} — the same application for every case.
 */
@SpringBootApplication
public class BenchMvcGatewayApplication {

    public static void main(String[] args) {
        SpringApplication.run(BenchMvcGatewayApplication.class, args);
    }
}
