package dev.ratelimiter.gateway;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/** A bare gateway: routes come from test properties, the limiter from auto-configuration. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class TestGatewayApplication {
}
