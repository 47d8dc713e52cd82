package dev.ratelimiter.samplemvc;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * The sample gateway's Server MVC twin: a Spring Cloud Gateway Server MVC with the MVC starter, the same limits and a
 * demo upstream. {@code GET /api/hello} with {@code X-API-Key: demo} is allowed a burst of 10, refilled at 5 per
 * second.
 */
@SpringBootApplication
public class SampleMvcGatewayApplication {

    public static void main(String[] args) {
        SpringApplication.run(SampleMvcGatewayApplication.class, args);
    }

    @Bean(destroyMethod = "close")
    DemoUpstream demoUpstream(@Value("${demo.upstream.port}") int port) {
        return new DemoUpstream(port);
    }
}
