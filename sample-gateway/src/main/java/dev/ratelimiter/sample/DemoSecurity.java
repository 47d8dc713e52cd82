package dev.ratelimiter.sample;

import java.nio.charset.StandardCharsets;

import javax.crypto.spec.SecretKeySpec;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.oauth2.jose.jws.MacAlgorithm;
import org.springframework.security.oauth2.jwt.NimbusReactiveJwtDecoder;
import org.springframework.security.oauth2.jwt.ReactiveJwtDecoder;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;

/**
 * {@code /secure/**} needs a JWT, verified with the HMAC secret {@code demo.jwt.secret}; every other demo route is
 * outside Spring Security altogether. DEMO ONLY: a secret in the configuration file lets anyone who reads it mint
 * tokens. A real gateway verifies its identity provider's signatures ({@code issuer-uri} / {@code jwk-set-uri}).
 */
@Configuration(proxyBeanMethods = false)
@EnableWebFluxSecurity
class DemoSecurity {

    @Bean
    ReactiveJwtDecoder demoJwtDecoder(@Value("${demo.jwt.secret}") String secret) {
        return NimbusReactiveJwtDecoder
                .withSecretKey(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"))
                .macAlgorithm(MacAlgorithm.HS256).build();
    }

    @Bean
    SecurityWebFilterChain demoSecurityChain(ServerHttpSecurity http, ReactiveJwtDecoder decoder) {
        return http.securityMatcher(ServerWebExchangeMatchers.pathMatchers("/secure/**"))
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .authorizeExchange(exchanges -> exchanges.anyExchange().authenticated())
                .oauth2ResourceServer(server -> server.jwt(jwt -> jwt.jwtDecoder(decoder)))
                .build();
    }
}
