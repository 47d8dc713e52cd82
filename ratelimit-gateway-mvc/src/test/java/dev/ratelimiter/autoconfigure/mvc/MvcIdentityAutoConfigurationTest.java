package dev.ratelimiter.autoconfigure.mvc;

import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.mvc.MvcRateLimiter;
import dev.ratelimiter.mvc.ServletIdentityResolver;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.oauth2.core.ClaimAccessor;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code ratelimit.identity.*} on the Server MVC flavour: the WebFlux sources, checks and messages, bar KeyResolvers. */
class MvcIdentityAutoConfigurationTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                    RateLimitMvcAutoConfiguration.class))
            .withPropertyValues("ratelimit.store.type=memory");

    @Test
    void byDefaultEveryValueComesFromTheHeaders() {
        runner.withPropertyValues("ratelimit.identity.user-header=X-Sub").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(MvcRateLimiter.class);
            ServletIdentityResolver resolver = context.getBean(ServletIdentityResolver.class);
            assertThat(resolver.describe(Dimension.API_KEY)).isEqualTo("the X-API-Key header");
            assertThat(resolver.describe(Dimension.USER)).isEqualTo("the X-Sub header");
            assertThat(resolver.challenge()).isEqualTo("ApiKey header=\"X-API-Key\"");
        });
    }

    @Test
    void principalClaimAndExpressionSourcesStartAndAreDescribedAsOnWebFlux() {
        runner.withPropertyValues("ratelimit.identity.api-key.source=claim,header",
                "ratelimit.identity.tenant.source=claim", "ratelimit.identity.tenant.claim=org",
                "ratelimit.identity.user.source=principal", "ratelimit.identity.tier.claim=plan").run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(MvcRateLimiter.class);
                    ServletIdentityResolver resolver = context.getBean(ServletIdentityResolver.class);
                    assertThat(resolver.describe(Dimension.API_KEY))
                            .isEqualTo("the azp claim of the token or the X-API-Key header");
                    assertThat(resolver.describe(Dimension.TENANT)).isEqualTo("the org claim of the token");
                    assertThat(resolver.describe(Dimension.USER)).isEqualTo("an authenticated principal");
                    assertThat(resolver.challenge()).isEqualTo("Bearer, ApiKey header=\"X-API-Key\"");
                });
        runner.withPropertyValues("ratelimit.identity.user.source=expression",
                "ratelimit.identity.user.expression=headers['X-Client'] ?: query['client']").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(ServletIdentityResolver.class).describe(Dimension.USER))
                            .isEqualTo("the value of ratelimit.identity.user.expression");
                });
    }

    @Test
    void aKeyResolverIsRefusedNamingWhatReplacesItHere() {
        runner.withPropertyValues("ratelimit.identity.api-key.source=key-resolver",
                "ratelimit.identity.api-key.key-resolver=clientKey").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                            .hasMessageContaining("ratelimit.identity.api-key.source names key-resolver")
                            .hasMessageContaining("Gateway Server MVC flavour cannot call")
                            .hasMessageContaining("ratelimit.identity.api-key.expression")
                            .hasMessageContaining("dev.ratelimiter.mvc.ServletIdentityResolver bean");
                });
        runner.withPropertyValues("ratelimit.identity.tenant.source=header,key-resolver").run(context -> assertThat(
                context).getFailure().rootCause().hasMessageContaining("ratelimit.identity.tenant.source names "
                        + "key-resolver"));
    }

    @Test
    void expressionsAreCheckedAsOnWebFlux() {
        runner.withPropertyValues("ratelimit.identity.tenant.source=expression",
                "ratelimit.identity.tenant.expression=headers['X-Org'].toUpperCase()")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("uses a method call (toUpperCase())")
                        .hasMessageContaining("they read headers, cookies, query, path, method, route, principal, "
                                + "claims, headerLengths, contentLength and combine them with operators, nothing else."));
        runner.withPropertyValues("ratelimit.identity.tenant.source=expression",
                "ratelimit.identity.tenant.expression=T(java.lang.Runtime)")
                .run(context -> assertThat(context).getFailure().rootCause().hasMessageContaining("uses a type"));
        runner.withPropertyValues("ratelimit.identity.tier.claim=plan", "ratelimit.identity.tier.header=X-Plan")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("ratelimit.identity.tier.claim and ratelimit.identity.tier.header are "
                                + "both set"));
    }

    @Test
    void withoutSpringSecuritysOAuth2TheHeadersAndThePrincipalWorkAndAClaimSourceFailsTheStartSayingWhy() {
        WebApplicationContextRunner withoutOAuth2 = runner
                .withClassLoader(new FilteredClassLoader(ClaimAccessor.class));
        withoutOAuth2.run(context -> assertThat(context).hasNotFailed().hasSingleBean(MvcRateLimiter.class));
        withoutOAuth2.withPropertyValues("ratelimit.identity.user.source=principal")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(MvcRateLimiter.class));
        withoutOAuth2.withPropertyValues("ratelimit.identity.tenant.source=claim").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("ratelimit.identity.tenant.source reads a claim")
                .hasMessageContaining("spring-security-oauth2-resource-server"));
        withoutOAuth2.withPropertyValues("ratelimit.identity.tier.claim=plan").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("ratelimit.identity.tier.claim reads a claim"));
        withoutOAuth2.withPropertyValues("ratelimit.identity.user.source=expression",
                "ratelimit.identity.user.expression=claims['sub']").run(context -> assertThat(context)
                        .getFailure().rootCause().hasMessageContaining("reads claims"));
    }

    @Test
    void anApplicationsOwnResolverReplacesOursAndTheConfigurationIsNotRead() {
        runner.withUserConfiguration(OwnResolver.class)
                .withPropertyValues("ratelimit.identity.api-key.source=key-resolver").run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(ServletIdentityResolver.class)
                            .hasSingleBean(MvcRateLimiter.class);
                    assertThat(context.getBean(ServletIdentityResolver.class).describe(Dimension.API_KEY))
                            .isEqualTo("the client certificate");
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnResolver {

        @Bean
        ServletIdentityResolver clientCertificates() {
            return new ServletIdentityResolver() {
                @Override
                public CallerIdentity resolve(org.springframework.web.servlet.function.ServerRequest request,
                        String routeId) {
                    return CallerIdentity.of("cert", null, null, null);
                }

                @Override
                public String describe(Dimension dimension) {
                    return "the client certificate";
                }
            };
        }
    }
}
