package dev.ratelimiter.mvc;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A Gateway Server MVC application with nothing of its own: the routes and limits come from the test's properties. */
@SpringBootApplication
public class TestMvcGatewayApplication {
}
