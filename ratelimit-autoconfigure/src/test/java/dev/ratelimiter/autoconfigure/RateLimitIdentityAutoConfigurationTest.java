package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import dev.ratelimiter.gateway.webflux.ConfiguredIdentityResolver;
import dev.ratelimiter.gateway.webflux.HeaderIdentityResolver;
import dev.ratelimiter.gateway.webflux.RateLimitFilter;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.oauth2.core.ClaimAccessor;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitIdentityAutoConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                    RateLimitIdentityAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class));

    @Test
    void byDefaultEveryValueComesFromTheHeadersReadWithoutAMono() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(RateLimitFilter.class);
            RequestIdentityResolver resolver = context.getBean(RequestIdentityResolver.class);
            assertThat(resolver).isInstanceOf(HeaderIdentityResolver.class);
            RequestIdentity headers = ((HeaderIdentityResolver) resolver).identity();
            assertThat(headers.apiKeyHeader()).isEqualTo("X-API-Key");
            assertThat(headers.userHeader()).isEqualTo("X-User-Id");
            assertThat(headers.tierHeader()).isNull();
        });
    }

    @Test
    void aTrustedTierHeaderStaysOnTheHeaderPath() {
        runner.withPropertyValues("ratelimit.identity.tier.header=X-Plan", "ratelimit.identity.user-header=X-Sub")
                .run(context -> {
                    RequestIdentity headers = ((HeaderIdentityResolver) context.getBean(RequestIdentityResolver.class))
                            .identity();
                    assertThat(headers.tierHeader()).isEqualTo("X-Plan");
                    assertThat(headers.userHeader()).isEqualTo("X-Sub");
                });
    }

    @Test
    void claimsAndFallbacksAreDescribedInTheOrderTheyAreAsked() {
        runner.withPropertyValues("ratelimit.identity.api-key.source=claim,header",
                "ratelimit.identity.tenant.source=claim", "ratelimit.identity.tenant.claim=org",
                "ratelimit.identity.user.source=principal").run(context -> {
                    RequestIdentityResolver resolver = context.getBean(RequestIdentityResolver.class);
                    assertThat(resolver).isInstanceOf(ConfiguredIdentityResolver.class);
                    assertThat(resolver.describe(Dimension.API_KEY))
                            .isEqualTo("the azp claim of the token or the X-API-Key header");
                    assertThat(resolver.describe(Dimension.TENANT)).isEqualTo("the org claim of the token");
                    assertThat(resolver.describe(Dimension.USER)).isEqualTo("an authenticated principal");
                    assertThat(resolver.challenge()).isEqualTo("Bearer, ApiKey header=\"X-API-Key\"");
                });
    }

    @Test
    void anApplicationsOwnResolverMakesOursBackOffAndTheFilterAsksIt() {
        runner.withUserConfiguration(OwnResolver.class).run(context -> {
            assertThat(context).hasSingleBean(RequestIdentityResolver.class);
            assertThat(context.getBean(RequestIdentityResolver.class).describe(Dimension.API_KEY))
                    .isEqualTo("the client certificate");
            assertThat(context).hasSingleBean(RateLimitFilter.class);
        });
    }

    @Test
    void withoutSpringSecuritysOAuth2TheHeadersStillWorkAndAClaimSourceFailsTheStartSayingWhy() {
        ReactiveWebApplicationContextRunner withoutOAuth2 = runner
                .withClassLoader(new FilteredClassLoader(ClaimAccessor.class));
        withoutOAuth2.run(context -> assertThat(context.getBean(RequestIdentityResolver.class))
                .isInstanceOf(HeaderIdentityResolver.class));
        withoutOAuth2.withPropertyValues("ratelimit.identity.user.source=principal").run(context ->
                assertThat(context.getBean(RequestIdentityResolver.class)).isInstanceOf(
                        ConfiguredIdentityResolver.class));
        withoutOAuth2.withPropertyValues("ratelimit.identity.tenant.source=claim").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("ratelimit.identity.tenant.source reads a claim")
                .hasMessageContaining("spring-security-oauth2-resource-server"));
        withoutOAuth2.withPropertyValues("ratelimit.identity.tier.claim=plan").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("ratelimit.identity.tier.claim reads a claim"));
    }

    @Test
    void aKeyResolverNamedInTheConfigurationGivesTheApiKey() {
        runner.withUserConfiguration(KeyResolvers.class)
                .withPropertyValues("ratelimit.identity.api-key.source=key-resolver",
                        "ratelimit.identity.api-key.key-resolver=clientKey")
                .run(context -> assertThat(context.getBean(RequestIdentityResolver.class)
                        .describe(Dimension.API_KEY)).isEqualTo("the request, as the KeyResolver 'clientKey' reads it"));
        runner.withPropertyValues("ratelimit.identity.api-key.source=key-resolver",
                "ratelimit.identity.api-key.key-resolver=missing").run(context -> assertThat(context).getFailure()
                        .rootCause().hasMessageContaining("names 'missing', but there is no KeyResolver bean"));
        runner.withUserConfiguration(KeyResolvers.class).withPropertyValues(
                "ratelimit.identity.api-key.source=key-resolver,header",
                "ratelimit.identity.api-key.key-resolver=clientKey").run(context -> assertThat(context).getFailure()
                        .rootCause().hasMessageContaining("combines key-resolver with other sources"));
        runner.withPropertyValues("ratelimit.identity.user.source=key-resolver").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("gives API keys only"));
    }

    @Test
    void aBadExpressionFailsTheStartNamingItsSetting() {
        runner.withPropertyValues("ratelimit.identity.tenant.source=expression",
                "ratelimit.identity.tenant.expression=headers['X-Org'")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("ratelimit.identity.tenant.expression 'headers['X-Org'' is not a valid "
                                + "expression"));
        runner.withPropertyValues("ratelimit.identity.tenant.source=expression",
                "ratelimit.identity.tenant.expression=headers['X-Org'].toUpperCase()")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("uses a method call (toUpperCase())")
                        .hasMessageContaining("they read headers, cookies, query, path, method, route, principal, "
                                + "claims, headerLengths, contentLength and combine them with operators, nothing "
                                + "else."));
        runner.withPropertyValues("ratelimit.identity.tenant.source=expression",
                "ratelimit.identity.tenant.expression=T(java.lang.Runtime)")
                .run(context -> assertThat(context).getFailure().rootCause().hasMessageContaining("uses a type"));
        runner.withPropertyValues("ratelimit.identity.tenant.source=expression",
                "ratelimit.identity.tenant.expression=@redisConnectionFactory")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("uses a bean reference"));
        runner.withPropertyValues("ratelimit.identity.tenant.source=expression",
                "ratelimit.identity.tenant.expression=header['X-Org']")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("the unknown property 'header'"));
        runner.withPropertyValues("ratelimit.identity.tenant.source=expression").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("ratelimit.identity.tenant.expression is empty"));
    }

    @Test
    void theTierHasOneTrustedSource() {
        runner.withPropertyValues("ratelimit.identity.tier.claim=plan", "ratelimit.identity.tier.header=X-Plan")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("ratelimit.identity.tier.claim and ratelimit.identity.tier.header are "
                                + "both set"));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnResolver {

        @Bean
        RequestIdentityResolver clientCertificates() {
            return new RequestIdentityResolver() {
                @Override
                public Mono<CallerIdentity> resolve(org.springframework.web.server.ServerWebExchange exchange) {
                    return Mono.just(CallerIdentity.of("cert", null, null, null));
                }

                @Override
                public String describe(Dimension dimension) {
                    return "the client certificate";
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class KeyResolvers {

        @Bean
        KeyResolver clientKey() {
            return exchange -> Mono.just("k");
        }
    }
}
