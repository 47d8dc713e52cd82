package dev.ratelimiter.testsupport;

import java.util.HashMap;
import java.util.Map;

import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Makes an application believe it runs in a Kubernetes pod, as Spring Boot detects one: the variables every pod has,
 * {@code KUBERNETES_SERVICE_HOST} and {@code KUBERNETES_SERVICE_PORT}, in the {@code systemEnvironment} property
 * source (where Boot's {@code CloudPlatform.KUBERNETES} looks, and nowhere else). The process's real environment is
 * left alone. Add it with {@code SpringApplicationBuilder.initializers(new KubernetesPod())}: it runs before the web
 * server is created, which is when Boot decides whether the server reads forwarding headers.
 */
public final class KubernetesPod implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        MutablePropertySources sources = context.getEnvironment().getPropertySources();
        String name = StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME;
        PropertySource<?> system = sources.get(name);
        Map<String, Object> variables = new HashMap<>();
        if (system != null && system.getSource() instanceof Map<?, ?> real) {
            real.forEach((key, value) -> variables.put(String.valueOf(key), value));
        }
        variables.put("KUBERNETES_SERVICE_HOST", "10.96.0.1");
        variables.put("KUBERNETES_SERVICE_PORT", "443");
        SystemEnvironmentPropertySource pod = new SystemEnvironmentPropertySource(name, variables);
        if (system != null) {
            sources.replace(name, pod);
        }
        else {
            sources.addLast(pod);
        }
    }
}
