package dev.ratelimiter.mvc;

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
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.config.annotation.web.configurers.AbstractHttpConfigurer;
import org.springframework.security.oauth2.jose.jws.MacAlgorithm;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.NimbusJwtDecoder;
import org.springframework.security.web.SecurityFilterChain;

/**
 * JWTs signed in the test with an HMAC key made for this JVM, and the servlet OAuth2 resource server that verifies
 * them: a real Spring Security filter chain in front of the MVC gateway, no identity provider. Every route is open, so
 * requests without a token reach the limiter; a token that fails verification is refused by Spring Security with 401.
 */
final class MvcTestTokens {

    static final SecretKey KEY = newKey();

    private MvcTestTokens() {
    }

    /** A token for {@code subject} with these claims, valid for an hour. */
    static String token(String subject, Map<String, Object> claims) {
        return sign(subject, claims, KEY);
    }

    /** A token like {@link #token}, signed with another key: the resource server must not believe it. */
    static String forged(String subject, Map<String, Object> claims) {
        return sign(subject, claims, newKey());
    }

    private static String sign(String subject, Map<String, Object> claims, SecretKey key) {
        JWTClaimsSet.Builder set = new JWTClaimsSet.Builder().subject(subject).issueTime(new Date())
                .expirationTime(Date.from(Instant.now().plusSeconds(3600)));
        claims.forEach(set::claim);
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), set.build());
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

    /** The resource server: Spring Security's servlet chain, JWTs verified with {@link #KEY}. */
    @TestConfiguration(proxyBeanMethods = false)
    @EnableWebSecurity
    static class ResourceServer {

        @Bean
        JwtDecoder jwtDecoder() {
            return NimbusJwtDecoder.withSecretKey(KEY).macAlgorithm(MacAlgorithm.HS256).build();
        }

        @Bean
        SecurityFilterChain gatewaySecurity(HttpSecurity http, JwtDecoder decoder) throws Exception {
            return http.csrf(AbstractHttpConfigurer::disable)
                    .authorizeHttpRequests(requests -> requests.anyRequest().permitAll())
                    .oauth2ResourceServer(server -> server.jwt(jwt -> jwt.decoder(decoder)))
                    .build();
        }
    }
}
