package dev.ratelimiter.gateway;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import dev.ratelimiter.core.JsonText;

/**
 * Where the members of a default problem body go, so that each body is spelt out once: straight into JSON text (no
 * customizer: the cost of a string concatenation, no map, no boxing), or into an ordered map that customizers change
 * and that is written as JSON afterwards.
 */
abstract sealed class ProblemBody {

    abstract ProblemBody put(String name, String value);

    abstract ProblemBody put(String name, long value);

    /** An int member: a customizer reads {@code status} as the {@link Integer} Spring's own status codes are. */
    abstract ProblemBody put(String name, int value);

    abstract ProblemBody put(String name, List<String> values);

    /** The members as a JSON object. */
    static String json(Consumer<ProblemBody> members) {
        Text text = new Text();
        members.accept(text);
        return text.json.append('}').toString();
    }

    /** The members as a writable map in their order. */
    static Map<String, Object> map(Consumer<ProblemBody> members) {
        Members map = new Members();
        members.accept(map);
        return map.members;
    }

    private static final class Text extends ProblemBody {

        private final StringBuilder json = new StringBuilder(512).append('{');

        /** Member names are the literals below, nothing a request chose: they need no escaping. */
        private StringBuilder name(String name) {
            return json.append(json.length() > 1 ? ",\"" : "\"").append(name).append("\":");
        }

        @Override
        ProblemBody put(String name, String value) {
            JsonText.quote(name(name), value);
            return this;
        }

        @Override
        ProblemBody put(String name, long value) {
            name(name).append(value);
            return this;
        }

        @Override
        ProblemBody put(String name, int value) {
            name(name).append(value);
            return this;
        }

        @Override
        ProblemBody put(String name, List<String> values) {
            name(name).append('[');
            for (int i = 0; i < values.size(); i++) {
                if (i > 0) {
                    json.append(',');
                }
                JsonText.quote(json, values.get(i));
            }
            json.append(']');
            return this;
        }
    }

    private static final class Members extends ProblemBody {

        private final Map<String, Object> members = new LinkedHashMap<>();

        @Override
        ProblemBody put(String name, String value) {
            members.put(name, value);
            return this;
        }

        @Override
        ProblemBody put(String name, long value) {
            members.put(name, value);
            return this;
        }

        @Override
        ProblemBody put(String name, int value) {
            members.put(name, value);
            return this;
        }

        @Override
        ProblemBody put(String name, List<String> values) {
            // A list of its own: a customizer may add to or trim it without touching the limiter's.
            members.put(name, new ArrayList<>(values));
            return this;
        }
    }
}
