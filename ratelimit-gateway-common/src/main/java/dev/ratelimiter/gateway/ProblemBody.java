package dev.ratelimiter.gateway;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import dev.ratelimiter.core.JsonText;
import org.springframework.http.ProblemDetail;

/**
 * Where the members of a default problem body go, so that each body is spelt out once: straight into JSON text (no
 * customizer: the cost of a string concatenation, no objects, no boxing), or into the {@link ProblemDetail} that
 * customizers change and that is written as JSON afterwards ({@link ProblemMembers}), in the same order.
 */
abstract sealed class ProblemBody {

    /** The members RFC 9457 defines, first in every body. */
    abstract ProblemBody problem(URI type, String title, int status, String detail);

    /** An extension member. */
    abstract ProblemBody put(String name, String value);

    abstract ProblemBody put(String name, long value);

    abstract ProblemBody put(String name, List<String> values);

    /** The members as a JSON object. */
    static String json(Consumer<ProblemBody> members) {
        Text text = new Text();
        members.accept(text);
        return text.json.append('}').toString();
    }

    /** The members as a problem detail, for the customizers to change. */
    static ProblemDetail detail(Consumer<ProblemBody> members) {
        Detail detail = new Detail();
        members.accept(detail);
        return detail.problem;
    }

    private static final class Text extends ProblemBody {

        private final StringBuilder json = new StringBuilder(512).append('{');

        /** Member names are the literals below, nothing a request chose: they need no escaping. */
        private StringBuilder name(String name) {
            return json.append(json.length() > 1 ? ",\"" : "\"").append(name).append("\":");
        }

        @Override
        ProblemBody problem(URI type, String title, int status, String detail) {
            JsonText.quote(name("type"), type.toString());
            JsonText.quote(name("title"), title);
            name("status").append(status);
            JsonText.quote(name("detail"), detail);
            return this;
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

    private static final class Detail extends ProblemBody {

        private final ProblemDetail problem = ProblemDetail.forStatus(0);

        @Override
        ProblemBody problem(URI type, String title, int status, String detail) {
            problem.setType(type);
            problem.setTitle(title);
            problem.setStatus(status);
            problem.setDetail(detail);
            return this;
        }

        @Override
        ProblemBody put(String name, String value) {
            problem.setProperty(name, value);
            return this;
        }

        @Override
        ProblemBody put(String name, long value) {
            problem.setProperty(name, value);
            return this;
        }

        @Override
        ProblemBody put(String name, List<String> values) {
            // A list of its own: a customizer may add to or trim it without touching the limiter's.
            problem.setProperty(name, new ArrayList<>(values));
            return this;
        }
    }
}
