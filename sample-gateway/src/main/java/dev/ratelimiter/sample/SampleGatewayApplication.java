package dev.ratelimiter.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring Cloud Gateway with the rate-limit starter and nothing else of its own but a demo upstream:
 * {@code GET /api/hello} with {@code X-API-Key: demo} is allowed a burst of 10, refilled at 5 per second.
 */
@SpringBootApplication
public class SampleGatewayApplication {

    public static void main(String[] args) {
        SpringApplication.run(SampleGatewayApplication.class, args);
    }
}
