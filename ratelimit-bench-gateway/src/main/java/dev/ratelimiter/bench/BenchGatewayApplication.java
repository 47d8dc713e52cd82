package dev.ratelimiter.bench;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The gateway of the side-by-side benchmark: one route, {@code /bench/**}, to {@code bench.upstream}, and the limiter
 * chosen by {@code bench.limiter} — the same application for every case, as a user deploys it.
 */
@SpringBootApplication
public class BenchGatewayApplication {

    public static void main(String[] args) {
        SpringApplication.run(BenchGatewayApplication.class, args);
    }
}
