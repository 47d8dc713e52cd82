package dev.ratelimiter.gateway;

import java.security.SecureRandom;
import java.time.Instant;
import java.util.Date;
import java.util.Map;

import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.oauth2.jose.jws.MacAlgorithm;
import org.springframework.security.oauth2.jwt.NimbusReactiveJwtDecoder;
import org.springframework.security.oauth2.jwt.ReactiveJwtDecoder;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * JWTs signed in the test with an HMAC key made for this JVM, and the OAuth2 resource server that verifies them: a
 * real Spring Security filter chain in front of the gateway, no identity provider. Every route is open, so requests
 * without a token reach the limiter; a token that fails verification is refused by Spring Security with 401.
 */
final class TestTokens {

    static final SecretKey KEY = newKey();

    private TestTokens() {
    }

    /** A token for {@code subject} with these claims, valid for an hour. */
    static String token(String subject, Map<String, Object> claims) {
        JWTClaimsSet.Builder set = new JWTClaimsSet.Builder().subject(subject).issueTime(new Date())
                .expirationTime(Date.from(Instant.now().plusSeconds(3600)));
        claims.forEach(set::claim);
        return sign(set.build(), KEY);
    }

    /** A token like {@link #token}, signed with another key: no resource server here may believe it. */
    static String forged(String subject, Map<String, Object> claims) {
        JWTClaimsSet.Builder set = new JWTClaimsSet.Builder().subject(subject);
        claims.forEach(set::claim);
        return sign(set.build(), newKey());
    }

    private static String sign(JWTClaimsSet claims, SecretKey key) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
            jwt.sign(new MACSigner(key));
            return jwt.serialize();
        }
        catch (JOSEException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private static SecretKey newKey() {
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        return new SecretKeySpec(secret, "HmacSHA256");
    }

    /** The resource server: Spring Security's WebFlux chain, JWTs verified with {@link #KEY}. */
    @Configuration(proxyBeanMethods = false)
    @EnableWebFluxSecurity
    static class ResourceServer {

        @Bean
        ReactiveJwtDecoder jwtDecoder() {
            return NimbusReactiveJwtDecoder.withSecretKey(KEY).macAlgorithm(MacAlgorithm.HS256).build();
        }

        @Bean
        SecurityWebFilterChain gatewaySecurity(ServerHttpSecurity http, ReactiveJwtDecoder decoder) {
            return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
                    .authorizeExchange(exchanges -> exchanges.anyExchange().permitAll())
                    .oauth2ResourceServer(server -> server.jwt(jwt -> jwt.jwtDecoder(decoder)))
                    .build();
        }
    }
}
