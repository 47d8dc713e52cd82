package dev.ratelimiter.rollup.gateway;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/** A bare gateway: routes, Redis, Kafka and abuse settings come from the test's properties. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class AbuseGatewayApplication {
}
