package dev.ratelimiter.scenarios;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.scenarios.Gateways.Mode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class GatewayArgumentsTest {

    private static final String REDIS = "redis://127.0.0.1:6390";
    private static final String UPSTREAM = "http://127.0.0.1:8099";

    @Test
    void everyGatewayGetsItsPortsItsRedisAndTheUpstream() {
        for (Mode mode : Mode.values()) {
            assertThat(GatewayArguments.of(mode, Limits.smoke(), 8081, 9081, REDIS, UPSTREAM)).as(mode.label)
                    .startsWith("--server.port=8081", "--server.address=127.0.0.1", "--management.server.port=9081",
                            "--spring.data.redis.url=" + REDIS, "--demo.upstream.uri=" + UPSTREAM);
        }
    }

    @Test
    void limiterOffAndScgSwitchOursOffAndOnlyScgGetsItsRateLimiter() {
        Limits limits = Limits.smoke();
        List<String> off = GatewayArguments.of(Mode.OFF, limits, 8081, 9081, REDIS, UPSTREAM);
        List<String> scg = GatewayArguments.of(Mode.SCG, limits, 8081, 9081, REDIS, UPSTREAM);
        assertThat(off).contains("--ratelimit.enabled=false").noneMatch(arg -> arg.startsWith("--demo.gateway-rate-limiter"));
        assertThat(scg).contains("--ratelimit.enabled=false",
                "--demo.gateway-rate-limiter.replenish-rate=" + limits.quota(),
                "--demo.gateway-rate-limiter.burst-capacity=" + limits.quota());
    }

    @Test
    void oursRunTheRunnersRulesInTheirOwnStoreMode() {
        Limits limits = Limits.smoke();
        List<String> local = GatewayArguments.of(Mode.LOCAL, limits, 8081, 9081, REDIS, UPSTREAM);
        assertThat(local).doesNotContain("--ratelimit.enabled=false").contains("--ratelimit.store.type=redis",
                "--ratelimit.store.key-prefix=rl-local",
                "--ratelimit.store.timeout=" + limits.storeTimeout().toMillis() + "ms",
                "--ratelimit.tiers.free.limits.default.store-mode=local",
                "--ratelimit.rules.free-hourly.enabled=false",
                "--ratelimit.rules.login-cap.capacity=" + limits.loginCap());
        assertThat(GatewayArguments.of(Mode.EXACT, limits, 8081, 9081, REDIS, UPSTREAM))
                .contains("--ratelimit.store.key-prefix=rl-exact", "--ratelimit.tiers.free.limits.default.store-mode=exact");
    }

    @Test
    void theCommandRunsTheJarOnThisJavaWithTheInstanceArgumentsAfterIt() {
        List<String> command = GatewayArguments.command(Path.of("/tmp/sample-gateway.jar"), List.of("--server.port=1"));
        assertThat(command.get(0)).isEqualTo(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // the heap at its maximum from the start and metaspace big enough for the run: fewer pauses
        assertThat(command).contains("-XX:TieredStopAtLevel=1", "-Xms64m", "-Xmx256m", "-XX:MetaspaceSize=128m");
        int jar = command.indexOf("-jar");
        assertThat(command.subList(jar, jar + 3)).containsExactly("-jar", "/tmp/sample-gateway.jar", "--server.port=1");
    }

    @Test
    void bothFlavoursGetTheSameArgumentsButTheNameOfTheLoginRoute() {
        for (Mode mode : Mode.values()) {
            List<String> webflux = GatewayArguments.of(Flavour.WEBFLUX, mode, Limits.smoke(), 8081, 9081, REDIS,
                    UPSTREAM);
            List<String> mvc = new ArrayList<>(GatewayArguments.of(Flavour.MVC, mode, Limits.smoke(), 8081, 9081,
                    REDIS, UPSTREAM));
            mvc.replaceAll(arg -> arg.equals("--ratelimit.rules.login-cap.match.route-ids=login")
                    ? "--ratelimit.rules.login-cap.match.route-ids=demo-login" : arg);
            assertThat(mvc).as(mode.label).isEqualTo(webflux);
        }
        assertThat(GatewayArguments.of(Flavour.MVC, Mode.EXACT, Limits.smoke(), 8081, 9081, REDIS, UPSTREAM))
                .contains("--ratelimit.rules.login-cap.match.route-ids=login", "--management.server.address=127.0.0.1",
                        "--demo.upstream.uri=" + UPSTREAM, "--demo.upstream.port=0");
    }
}
