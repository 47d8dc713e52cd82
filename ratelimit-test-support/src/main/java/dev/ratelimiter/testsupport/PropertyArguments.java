package dev.ratelimiter.testsupport;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code name=value} properties as the command-line arguments of an application a test starts, so that the test's own
 * settings win over the suite's {@code application.properties} (default properties would lose to it).
 */
public final class PropertyArguments {

    private PropertyArguments() {
    }

    /**
     * One {@code --name=value} per name, with its last value, as a map of default properties would hold it: two
     * arguments of one name would join their values with a comma.
     */
    public static String[] of(List<String> properties) {
        Map<String, String> byName = new LinkedHashMap<>();
        for (String property : properties) {
            int equals = property.indexOf('=');
            byName.put(equals < 0 ? property : property.substring(0, equals),
                    equals < 0 ? "" : property.substring(equals + 1));
        }
        return byName.entrySet().stream().map(entry -> "--" + entry.getKey() + "=" + entry.getValue())
                .toArray(String[]::new);
    }
}
