package dev.ratelimiter.autoconfigure;

import java.util.Collection;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindConstructorProvider;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.BindMethod;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertyState;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.MergedAnnotations;

/**
 * The property paths Spring Boot binds into a {@code @ConfigurationProperties} type, found by Boot's own {@link Binder}
 * rather than by reading the class as the configuration processor does: the binder walks a source that claims
 * every name and holds no value, and each value it would read is recorded. So JavaBean setters, getter-only nested
 * beans (whatever their constructors), constructor binding and inherited properties count exactly as at runtime;
 * maps and collections are leaves, as the metadata lists them.
 */
final class BindablePropertyPaths {

    private BindablePropertyPaths() {
    }

    /** The prefix a {@code @ConfigurationProperties} type is bound at. */
    static String prefix(Class<?> type) {
        return MergedAnnotations.from(type).get(ConfigurationProperties.class).getString("prefix");
    }

    /** What Boot binds for this type at its prefix, as it would bind the bean. */
    static Bindable<?> bindable(Class<?> type) {
        if (BindConstructorProvider.DEFAULT.getBindConstructor(type, false) != null) {
            return Bindable.of(type).withBindMethod(BindMethod.VALUE_OBJECT);
        }
        return Bindable.ofInstance(BeanUtils.instantiateClass(type)).withBindMethod(BindMethod.JAVA_BEAN);
    }

    /**
     * Every leaf path bound into the type, e.g. {@code ratelimit.management.security.admin.password}. Types of
     * {@code ownPackage} (and below) are beans to walk into even when they could be converted from a string.
     */
    static SortedSet<String> of(Class<?> type, String ownPackage) {
        SortedSet<String> leaves = new TreeSet<>();
        BindHandler recordLeaves = new BindHandler() {
            @Override
            public <T> Bindable<T> onStart(ConfigurationPropertyName name, Bindable<T> target, BindContext context) {
                if (isLeaf(target.getType(), ownPackage)) {
                    leaves.add(name.toString());
                    return null;
                }
                return target;
            }
        };
        new Binder(new EveryNameNoValue()).bind(prefix(type), bindable(type), recordLeaves);
        return leaves;
    }

    private static boolean isLeaf(ResolvableType type, String ownPackage) {
        Class<?> resolved = type.resolve(Object.class);
        if (resolved.isPrimitive() || resolved.isEnum() || resolved.isArray() || Map.class.isAssignableFrom(resolved)
                || Collection.class.isAssignableFrom(resolved) || resolved.getName().startsWith("java.")) {
            return true;
        }
        // Another library's value types (DataSize, MimeType) bind from one string. Ours are beans even with a
        // constructor taking a string: that is how the operator account's password once went missing.
        return !resolved.getName().startsWith(ownPackage + ".")
                && ApplicationConversionService.getSharedInstance().canConvert(String.class, resolved);
    }

    /** A source that claims descendants of every name, so that the binder walks everything, and holds no value. */
    private static final class EveryNameNoValue implements ConfigurationPropertySource {

        @Override
        public ConfigurationProperty getConfigurationProperty(ConfigurationPropertyName name) {
            return null;
        }

        @Override
        public ConfigurationPropertyState containsDescendantOf(ConfigurationPropertyName name) {
            return ConfigurationPropertyState.PRESENT;
        }
    }
}
