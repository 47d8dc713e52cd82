package dev.ratelimiter.gateway;

/**
 * A name an identity source reads that the request sends more than once: a header, or a query parameter. Two values
 * are two claims of who is calling, and the upstream may believe the other one, so the request is refused (400) rather
 * than decided on the value the client put first. Cookies are not among them: a browser legitimately sends two cookies
 * of one name (set on different paths), and servers read the first.
 *
 * @param kind where the name is
 * @param name the header's or parameter's name
 */
public record RepeatedName(Kind kind, String name) {

    /** Where a repeated name is. */
    public enum Kind {
        /** A request header; the problem body names it as {@code header}. */
        HEADER("header"),
        /** A query parameter; the problem body names it as {@code parameter}. */
        QUERY("parameter");

        private final String field;

        Kind(String field) {
            this.field = field;
        }

        /** The problem body's field that names it. */
        public String field() {
            return field;
        }
    }

    /** The request header {@code name}, sent twice. */
    public static RepeatedName header(String name) {
        return new RepeatedName(Kind.HEADER, name);
    }

    /** The query parameter {@code name}, sent twice. */
    public static RepeatedName query(String name) {
        return new RepeatedName(Kind.QUERY, name);
    }

    /** In words, for the problem's detail: "the X-API-Key header", "the query parameter 'client'". */
    public String describe() {
        return kind == Kind.HEADER ? "the " + name + " header" : "the query parameter '" + name + "'";
    }
}
