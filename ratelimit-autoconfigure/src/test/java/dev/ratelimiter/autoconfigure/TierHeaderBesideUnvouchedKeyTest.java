package dev.ratelimiter.autoconfigure;

import java.time.Clock;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.autoconfigure.identity.AdapterSettings;
import dev.ratelimiter.autoconfigure.identity.IdentityResolvers;
import dev.ratelimiter.autoconfigure.rules.PropertyRuleDefinitions;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.UnknownApiKeyPolicy;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.IdentityOrigin;
import dev.ratelimiter.gateway.IdentityRequest;
import dev.ratelimiter.gateway.IdentitySources;
import dev.ratelimiter.gateway.webflux.ExchangeIdentityRequest;
import org.junit.jupiter.api.Test;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationToken;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 31, finding 2, with the other trusted tier source: {@code tier.header}, set by the authentication in front from
 * the same token, vouches for the caller it identified, not for a key the client wrote beside a token that carries no
 * key claim. Each rotated key is an unknown key (the attack review found each a fresh bucket of the vouched tier).
 */
class TierHeaderBesideUnvouchedKeyTest {

    @Test
    void aTierHeaderBesideAnUnvouchedHeaderKeyVouchesForThatKey() {
        RateLimitProperties properties = RuleAdminRaceTest.properties();
        properties.getTiers().get("free").setApiKeys(List.of("listed-key-1"));
        LimitProperties pro = new LimitProperties();
        pro.setCapacity(2);
        pro.setRefillTokens(1);
        RateLimitProperties.Tier proTier = new RateLimitProperties.Tier();
        proTier.setLimits(Map.of("default", pro));
        properties.setTiers(Map.of("free", properties.getTiers().get("free"), "pro", proTier));
        properties.getApiKey().getUnknown().setPolicy(UnknownApiKeyPolicy.PER_ADDRESS);
        properties.getIdentity().getApiKey().setSource(List.of(IdentitySourceProperties.Source.CLAIM,
                IdentitySourceProperties.Source.HEADER));
        properties.getIdentity().getTier().setHeader("X-Plan");

        RuleSet rules = new RuleSetFactory(new PropertyRuleDefinitions(properties)).configured();
        IdentitySources sources = IdentityResolvers.sources(properties, getClass().getClassLoader());
        Admission admission = new Admission(null, sources, AdapterSettings.apiKeyRefusals(properties),
                AdapterSettings.apiKeyFormat(properties), AdapterSettings.users(properties),
                AdapterSettings.tenants(properties), VerdictListener.all(List.of()), Clock.systemUTC());
        // a token without azp (Okta's cid); the authentication in front wrote X-Plan: pro from it
        Jwt jwt = Jwt.withTokenValue("t").header("alg", "none").subject("u-pro").claim("cid", "okta-client").build();
        for (int i = 1; i <= 3; i++) {
            MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/x")
                    .header("X-API-Key", "rotated-" + i).header("X-Plan", "pro"));
            CallerIdentity caller = sources.identify(new ExchangeIdentityRequest(exchange),
                    new JwtAuthenticationToken(jwt));
            assertThat(caller.origin(Dimension.API_KEY)).isEqualTo(IdentityOrigin.UNVOUCHED);
            assertThat(admission.tier(rules, caller))
                    .as("a key nobody vouched for, beside a vouched tier, is an unknown key (as with tier.claim)")
                    .isEqualTo(RuleSet.UNKNOWN_KEYS);
        }
    }
}
