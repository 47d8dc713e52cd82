package dev.ratelimiter.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import dev.ratelimiter.core.Priority;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanUtils;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata IDEs complete from is whole and true: every property Spring Boot binds into any
 * {@code @ConfigurationProperties} type of the project has a described entry (found by Boot's binder, not by reading
 * the classes as the processor does, so a property the processor overlooks is caught); every entry, default, hint
 * and replacement names something that binds; and every hinted value is one the binding and the settings accept.
 * Nothing here lists properties: a new one needs only its javadoc.
 */
class ConfigurationMetadataTest {

    private static final String OWN_PACKAGE = "dev.ratelimiter";

    /** Enum constants the binding accepts but start-up refuses for this property, so its hint leaves them out. */
    private static final Map<String, Set<String>> REFUSED_AT_START_UP = Map.of(
            // key-resolver gives an API key only
            "ratelimit.identity.user.source", Set.of("KEY_RESOLVER"),
            "ratelimit.identity.tenant.source", Set.of("KEY_RESOLVER"),
            // the unknown keys' bucket limits a rate, never requests in progress
            "ratelimit.api-key.unknown.limit.algorithm", Set.of("CONCURRENCY"));

    private static final List<Class<?>> TYPES = configurationPropertiesTypes();

    private static final Map<String, Class<?>> OWNERS = owners();

    private static final GeneratedMetadata METADATA = GeneratedMetadata.beside(RateLimitProperties.class);

    @Test
    void everyPropertyBoundHasADescribedEntry() {
        assertThat(TYPES).contains(RateLimitProperties.class, OperatorSecurityProperties.class,
                LoadSheddingProperties.class);
        List<String> problems = new ArrayList<>();
        for (Class<?> type : TYPES) {
            problems.addAll(GeneratedMetadata.beside(type).undescribed(type,
                    BindablePropertyPaths.of(type, OWN_PACKAGE)));
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void theOperatorPasswordsAndTheUnknownKeysBucketAreListed() {
        // Missed by the processor once: Account's one constructor with an argument read as constructor binding; the
        // bucket's LimitProperties is a getter-only bean of a top-level class.
        for (String name : List.of("ratelimit.management.security.admin.password",
                "ratelimit.management.security.viewer.password", "ratelimit.api-key.unknown.limit.capacity",
                "ratelimit.api-key.unknown.limit.failure-mode")) {
            assertThat(OWNERS.keySet()).contains(name);
            assertThat(METADATA.properties().keySet()).contains(name);
        }
        assertThat(METADATA.properties().get("ratelimit.api-key.unknown.limit.capacity").path("defaultValue").asInt())
                .isEqualTo(10);
    }

    @Test
    void aBoundFieldWithoutAnEntryIsReported() {
        String document = """
                {"properties": [
                  {"name": "sample.named", "description": "Described."},
                  {"name": "sample.account.user", "description": ""}
                ]}""";
        GeneratedMetadata fake = GeneratedMetadata.parse(document.getBytes(StandardCharsets.UTF_8));
        Set<String> bound = BindablePropertyPaths.of(SampleProperties.class, OWN_PACKAGE);

        assertThat(bound).containsExactly("sample.account.password", "sample.account.user", "sample.missing",
                "sample.named");
        assertThat(fake.undescribed(SampleProperties.class, bound)).containsExactly(
                "sample.account.password (bound by SampleProperties) has no metadata entry",
                "sample.account.user (bound by SampleProperties) has no description: javadoc its field",
                "sample.missing (bound by SampleProperties) has no metadata entry");
    }

    @Test
    void everyEntryUnderOurPrefixesIsBound() {
        Set<String> prefixes = TYPES.stream().map(BindablePropertyPaths::prefix)
                .collect(Collectors.toSet());
        List<String> unbound = METADATA.properties().keySet().stream()
                .filter(name -> prefixes.stream().anyMatch(prefix -> name.startsWith(prefix + ".")))
                .filter(name -> !OWNERS.containsKey(name)).toList();
        assertThat(unbound).isEmpty();
    }

    @Test
    void everyDefaultListedIsTheDefaultBound() {
        List<String> wrong = new ArrayList<>();
        METADATA.properties().forEach((name, entry) -> {
            JsonNode listed = entry.path("defaultValue");
            if (listed.isMissingNode() || !OWNERS.containsKey(name)) {
                return;
            }
            String written = listed.isArray()
                    ? listed.values().stream().map(JsonNode::asString).collect(Collectors.joining(","))
                    : listed.asString();
            List<Object> bound = bind(name, written);
            Object actual = defaultOf(name);
            if (bound.isEmpty() || !bound.get(0).equals(actual)) {
                wrong.add(name + ": the metadata says " + written + ", the class starts with " + actual);
            }
        });
        assertThat(wrong).isEmpty();
    }

    @Test
    void everyHintNamesAProperty() {
        assertThat(METADATA.hints()).isNotEmpty();
        List<String> strays = METADATA.hints().stream().map(hint -> property(hint.path("name").asString()))
                .filter(name -> !METADATA.properties().containsKey(name)).toList();
        assertThat(strays).isEmpty();
    }

    @Test
    void everyHintedValueBindsAndIsDescribed() {
        List<String> problems = new ArrayList<>();
        for (JsonNode hint : METADATA.hints()) {
            String name = hint.path("name").asString();
            for (JsonNode value : hint.path("values").values()) {
                String written = value.path("value").asString();
                try {
                    if (bind(name, written).isEmpty()) {
                        problems.add(name + "=" + written + " reaches no property");
                    }
                }
                catch (BindException ex) {
                    problems.add(name + "=" + written + " does not bind: "
                            + NestedExceptionUtils.getMostSpecificCause(ex).getMessage());
                }
                if (value.path("description").asString("").isBlank()) {
                    problems.add(name + "=" + written + " has no description");
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void anEnumsHintListsEveryConstantStartUpAccepts() {
        List<String> problems = new ArrayList<>();
        for (JsonNode hint : METADATA.hints()) {
            String name = hint.path("name").asString();
            Set<String> hinted = new TreeSet<>();
            Class<?> enumType = null;
            for (JsonNode value : hint.path("values").values()) {
                for (Object element : boundElements(name, value.path("value").asString())) {
                    if (element instanceof Enum<?> constant) {
                        enumType = constant.getDeclaringClass();
                        hinted.add(constant.name());
                    }
                }
            }
            if (enumType != null) {
                Set<String> accepted = new TreeSet<>();
                for (Object constant : enumType.getEnumConstants()) {
                    accepted.add(((Enum<?>) constant).name());
                }
                accepted.removeAll(REFUSED_AT_START_UP.getOrDefault(name, Set.of()));
                if (!hinted.equals(accepted)) {
                    problems.add(name + " hints " + hinted + ", start-up accepts " + accepted);
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void hintedPrioritiesAreOnesTheSheddersAccept() {
        List<String> values = hintValues("ratelimit.shedding.default-priority");
        assertThat(values).containsExactlyInAnyOrder("critical", "user-facing", "normal", "background");
        assertThat(values).allSatisfy(value -> assertThat(Priority.parse(value)).isNotNull());
    }

    @Test
    void beanReferencesNameATypeOnTheClassPath() {
        List<String> targets = new ArrayList<>();
        for (JsonNode hint : METADATA.hints()) {
            for (JsonNode provider : hint.path("providers").values()) {
                if (provider.path("name").asString().equals("spring-bean-reference")) {
                    assertThat(METADATA.properties().get(hint.path("name").asString()).path("type").asString())
                            .isEqualTo(String.class.getName());
                    targets.add(provider.path("parameters").path("target").asString());
                }
            }
        }
        assertThat(targets).contains("org.springframework.cloud.gateway.filter.ratelimit.KeyResolver");
        assertThat(targets).allSatisfy(target -> assertThat(ClassUtils.isPresent(target, null)).isTrue());
    }

    @Test
    void aRemovedPropertyIsAnErrorNamingItsReplacement() {
        JsonNode deprecation = METADATA.properties().get("ratelimit.identity.trusted-proxy-hops").path("deprecation");
        assertThat(deprecation.path("level").asString()).isEqualTo("error");
        METADATA.properties().values().stream().map(entry -> entry.path("deprecation").path("replacement"))
                .filter(replacement -> !replacement.isMissingNode())
                .forEach(replacement -> assertThat(OWNERS).containsKey(replacement.asString()));
    }

    /** Every {@code @ConfigurationProperties} type of the project's main code on this class path. */
    private static List<Class<?>> configurationPropertiesTypes() {
        ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false);
        scanner.addIncludeFilter(new AnnotationTypeFilter(ConfigurationProperties.class));
        String tests = GeneratedMetadata.root(ConfigurationMetadataTest.class).toString();
        return scanner.findCandidateComponents(OWN_PACKAGE).stream()
                .<Class<?>>map(candidate -> ClassUtils.resolveClassName(candidate.getBeanClassName(), null))
                .filter(type -> !GeneratedMetadata.root(type).toString().equals(tests)).toList();
    }

    /** Each bound path and the type that binds it. */
    private static Map<String, Class<?>> owners() {
        Map<String, Class<?>> owners = new LinkedHashMap<>();
        for (Class<?> type : TYPES) {
            BindablePropertyPaths.of(type, OWN_PACKAGE).forEach(path -> owners.put(path, type));
        }
        return owners;
    }

    /** The property a hint is about: hints on a map's keys or values are named {@code <map>.keys}, {@code .values}. */
    private static String property(String hint) {
        for (String suffix : List.of(".keys", ".values")) {
            String map = hint.substring(0, Math.max(0, hint.length() - suffix.length()));
            if (hint.endsWith(suffix) && METADATA.properties().containsKey(map)) {
                return map;
            }
        }
        return hint;
    }

    private static List<String> hintValues(String name) {
        return METADATA.hints().stream().filter(hint -> hint.path("name").asString().equals(name))
                .flatMap(hint -> hint.path("values").values().stream()).map(value -> value.path("value").asString())
                .toList();
    }

    /**
     * What the owner's binding makes of one value written for a property (or, for a map's {@code .keys} hint, of an
     * entry under that key): empty if the value did not reach it, a failure if it does not convert.
     */
    private static List<Object> bind(String name, String value) {
        String property = property(name);
        Map<String, String> source = name.endsWith(".keys") && !property.equals(name)
                ? Map.of(property + "." + value, "1")
                : Map.of(property.equals(name) ? name : property + ".entry", value);
        Class<?> owner = OWNERS.get(property);
        assertThat(owner).as("type binding %s", property).isNotNull();
        List<Object> bound = new ArrayList<>();
        BindHandler capture = new BindHandler() {
            @Override
            public Object onSuccess(ConfigurationPropertyName bindName, Bindable<?> target, BindContext context,
                    Object result) {
                if (bindName.toString().equals(property)) {
                    bound.add(result);
                }
                return result;
            }
        };
        new Binder(new MapConfigurationPropertySource(source)).bind(BindablePropertyPaths.prefix(owner),
                BindablePropertyPaths.bindable(owner), capture);
        return bound;
    }

    /** A property's value in its owner as constructed, before anything is bound. */
    private static Object defaultOf(String name) {
        Class<?> owner = OWNERS.get(name);
        String relative = name.substring(BindablePropertyPaths.prefix(owner).length() + 1);
        StringBuilder path = new StringBuilder();
        for (String segment : relative.split("\\.")) {
            String[] words = segment.split("-");
            path.append(path.isEmpty() ? "" : ".").append(words[0]);
            for (int i = 1; i < words.length; i++) {
                path.append(Character.toUpperCase(words[i].charAt(0))).append(words[i].substring(1));
            }
        }
        return PropertyAccessorFactory.forBeanPropertyAccess(BeanUtils.instantiateClass(owner))
                .getPropertyValue(path.toString());
    }

    /** The value, or each element of a list, a hinted value binds to; none where it does not bind (reported apart). */
    private static Collection<?> boundElements(String name, String value) {
        try {
            List<Object> bound = bind(name, value);
            if (bound.isEmpty()) {
                return List.of();
            }
            return bound.get(0) instanceof Collection<?> collection ? collection : bound;
        }
        catch (BindException ex) {
            return List.of();
        }
    }

    /** A type the processor would misread: a nested bean whose only constructor takes an argument. */
    @ConfigurationProperties("sample")
    static class SampleProperties {

        /** Described. */
        private String named;

        private String missing;

        private final Account account = new Account("ratelimit-admin");

        public String getNamed() {
            return named;
        }

        public void setNamed(String named) {
            this.named = named;
        }

        public String getMissing() {
            return missing;
        }

        public void setMissing(String missing) {
            this.missing = missing;
        }

        public Account getAccount() {
            return account;
        }

        static class Account {

            private String user;

            private String password;

            Account(String user) {
                this.user = user;
            }

            public String getUser() {
                return user;
            }

            public void setUser(String user) {
                this.user = user;
            }

            public String getPassword() {
                return password;
            }

            public void setPassword(String password) {
                this.password = password;
            }
        }
    }
}
