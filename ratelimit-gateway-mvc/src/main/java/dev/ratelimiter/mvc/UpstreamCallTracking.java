package dev.ratelimiter.mvc;

import java.lang.reflect.Modifier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.NameMatchMethodPointcutAdvisor;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.cloud.gateway.server.mvc.handler.ProxyExchange;

/**
 * Tells each request's {@link LimitedRequest} when its call to an upstream starts and returns, by advising the
 * gateway's {@link ProxyExchange} beans (the one place every Gateway Server MVC route calls its upstream through).
 *
 * <p>Why the servlet's end is not enough: a route whose filter answers asynchronously with a timeout
 * ({@code ServerResponse.async(future, timeout)}) ends the servlet request at the timeout while its worker's call goes
 * on at the upstream. Its concurrency permits and load-shedding tickets must count until that call returns, or a
 * slow upstream would be sent more calls at once than the limit allows. And a call that would only start after the
 * request is over (its answer already given, its permits back) is not made at all: nobody is waiting for its answer,
 * and it would reach the upstream uncounted.
 *
 * <p>The bean keeps its own class (a subclass proxy), so whatever injects it by its class still gets it; an
 * application's own exchange that cannot be subclassed (a final class or method) is left as it is, with a warning.
 */
public final class UpstreamCallTracking implements BeanPostProcessor {

    private static final Logger logger = LoggerFactory.getLogger(UpstreamCallTracking.class);

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!(bean instanceof ProxyExchange) || bean instanceof Tracked) {
            return bean;
        }
        if (!subclassable(bean.getClass())) {
            // an interface proxy would change the bean's class under whatever injects it by its class
            logger.warn("ProxyExchange bean '{}' ({}) cannot be subclassed (a final class or a final exchange "
                    + "method): its upstream calls are not followed, so behind a timeout filter a call still in "
                    + "progress no longer holds its rate-limit permits", beanName, bean.getClass().getName());
            return bean;
        }
        ProxyFactory factory = new ProxyFactory(bean);
        factory.setProxyTargetClass(true);
        factory.addInterface(Tracked.class);
        NameMatchMethodPointcutAdvisor advisor = new NameMatchMethodPointcutAdvisor(new CallBracket());
        advisor.setMappedName("exchange");
        factory.addAdvisor(advisor);
        return factory.getProxy(bean.getClass().getClassLoader());
    }

    private static boolean subclassable(Class<?> type) {
        if (Modifier.isFinal(type.getModifiers())) {
            return false;
        }
        try {
            return !Modifier.isFinal(type.getMethod("exchange", ProxyExchange.Request.class).getModifiers());
        }
        catch (NoSuchMethodException ex) {
            return false;
        }
    }

    /** Marks an exchange already advised, so that a second post-processing pass does not advise it twice. */
    public interface Tracked {
    }

    private static final class CallBracket implements MethodInterceptor {

        @Override
        public Object invoke(MethodInvocation invocation) throws Throwable {
            Object[] arguments = invocation.getArguments();
            LimitedRequest limited = arguments.length == 1 && arguments[0] instanceof ProxyExchange.Request request
                    ? LimitedRequest.of(request.getServerRequest().servletRequest()) : null;
            if (limited == null) {
                return invocation.proceed();
            }
            if (!limited.upstreamCallStarted()) {
                throw new LimitedRequest.RequestOverException();
            }
            try {
                return invocation.proceed();
            }
            finally {
                limited.upstreamCallEnded();
            }
        }
    }
}
