package dev.ratelimiter.gateway;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.ratelimiter.core.JsonText;
import org.springframework.http.ProblemDetail;

/**
 * A {@link ProblemDetail} as the members of its JSON object, in the order the limiter has always written them: the
 * members RFC 9457 defines ({@code type}, {@code title}, {@code status}, {@code detail}, {@code instance}, each only
 * when set), then the extension members in the order they were set.
 *
 * <p>The limiter writes problems through this order rather than through Jackson: Jackson 3 (Boot 4's) sorts a bean's
 * properties alphabetically by default, so Spring's {@code ProblemDetailJacksonMixin} writes {@code detail} first, and
 * leaves DEL and U+2028 unescaped, which {@link JsonText} escapes so that a refusal's text never breaks a log line.
 * Clients parse these bodies: the order and the escapes are kept as they were.
 */
public final class ProblemMembers {

    private ProblemMembers() {
    }

    /** The members in order, in a new map: {@code type} and {@code instance} as strings, {@code status} an Integer. */
    public static Map<String, Object> of(ProblemDetail problem) {
        Map<String, Object> members = new LinkedHashMap<>();
        putIfSet(members, "type", problem.getType());
        putIfSet(members, "title", problem.getTitle());
        if (problem.getStatus() != 0) {
            members.put("status", problem.getStatus());
        }
        putIfSet(members, "detail", problem.getDetail());
        putIfSet(members, "instance", problem.getInstance());
        if (problem.getProperties() != null) {
            members.putAll(problem.getProperties());
        }
        return members;
    }

    /** The problem as JSON text, written as {@link JsonText#value(Object)} writes its members. */
    public static String json(ProblemDetail problem) {
        return JsonText.value(of(problem));
    }

    /**
     * The problem a body of members describes, for a customizer that reads as a {@link ProblemDetail} what an earlier
     * one changed as a map: the members RFC 9457 defines take their places, the rest become properties in their
     * order.
     *
     * @throws IllegalStateException if a defined member has a value of another kind (a {@code status} that is no
     * number, a {@code type} that is no URI)
     */
    static ProblemDetail from(Map<String, Object> members) {
        ProblemDetail problem = ProblemDetail.forStatus(0);
        members.forEach((name, value) -> {
            switch (name) {
                case "type" -> problem.setType(uri(name, value));
                case "title" -> problem.setTitle(text(name, value));
                case "status" -> problem.setStatus(status(value));
                case "detail" -> problem.setDetail(text(name, value));
                case "instance" -> problem.setInstance(uri(name, value));
                default -> problem.setProperty(name, value);
            }
        });
        return problem;
    }

    private static void putIfSet(Map<String, Object> members, String name, Object value) {
        if (value != null) {
            members.put(name, value instanceof URI uri ? uri.toString() : value);
        }
    }

    private static URI uri(String name, Object value) {
        if (value == null || value instanceof URI) {
            return (URI) value;
        }
        try {
            return URI.create(text(name, value));
        }
        catch (IllegalArgumentException ex) {
            throw new IllegalStateException("The problem body's '" + name + "' member is not a URI: " + ex.getMessage(),
                    ex);
        }
    }

    private static String text(String name, Object value) {
        if (value == null || value instanceof String) {
            return (String) value;
        }
        throw new IllegalStateException("The problem body's '" + name + "' member is a "
                + value.getClass().getSimpleName() + ", not a string");
    }

    private static int status(Object value) {
        if (value == null) {
            return 0;
        }
        if (value instanceof Integer || value instanceof Long || value instanceof Short) {
            return ((Number) value).intValue();
        }
        throw new IllegalStateException("The problem body's 'status' member is a " + value.getClass().getSimpleName()
                + ", not a whole number");
    }
}
