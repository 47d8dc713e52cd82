package dev.ratelimiter.rebalancer;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/** A bare gateway for one region: routes, Redis and region settings come from the test's properties. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class RegionGatewayApplication {
}
