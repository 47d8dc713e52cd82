package dev.ratelimiter.mvc;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * Puts the limiter in front of every router function bean, the gateway's routes from
 * {@code spring.cloud.gateway.server.webmvc.routes} and an application's own {@code RouterFunction} beans alike; only
 * their gateway routes are limited (see {@link RateLimitedRouterFunction}).
 */
public final class RouterFunctionLimiting implements BeanPostProcessor {

    private final ObjectProvider<MvcRateLimiter> limiter;
    private final ObjectProvider<MvcLoadShedding> shedding;

    /** @param limiter looked up when the first router function is made: a post-processor is made before it */
    public RouterFunctionLimiting(ObjectProvider<MvcRateLimiter> limiter) {
        this(limiter, null);
    }

    /** @param shedding priority load shedding behind the limiter, looked up as the limiter is; null: none */
    public RouterFunctionLimiting(ObjectProvider<MvcRateLimiter> limiter, ObjectProvider<MvcLoadShedding> shedding) {
        this.limiter = limiter;
        this.shedding = shedding;
    }

    @Override
    @SuppressWarnings("unchecked")
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof RouterFunction<?> routes && !(bean instanceof RateLimitedRouterFunction)) {
            MvcRateLimiter available = limiter.getIfAvailable();
            return available == null ? bean
                    : new RateLimitedRouterFunction((RouterFunction<ServerResponse>) routes, available,
                            shedding == null ? null : shedding.getIfAvailable());
        }
        return bean;
    }
}
