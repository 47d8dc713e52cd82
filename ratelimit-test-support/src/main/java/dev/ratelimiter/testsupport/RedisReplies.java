package dev.ratelimiter.testsupport;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Parsers for the text replies the fixtures read: INFO sections and field/value arrays. */
final class RedisReplies {

    private RedisReplies() {
    }

    /** {@code INFO} (or {@code CLUSTER INFO}) text as field → value; section headers and blank lines dropped. */
    static Map<String, String> infoFields(String info) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return fields;
    }

    /**
     * The {@code calls} count of one command in {@code INFO commandstats} text
     * ({@code cmdstat_evalsha:calls=12,usec=...}), 0 when the command was not called since the last reset.
     */
    static long commandCalls(String commandStats, String command) {
        String value = infoFields(commandStats).get("cmdstat_" + command.toLowerCase(Locale.ROOT));
        if (value == null) {
            return 0;
        }
        for (String stat : value.split(",")) {
            if (stat.startsWith("calls=")) {
                return Long.parseLong(stat.substring("calls=".length()));
            }
        }
        throw new IllegalStateException("no calls= in commandstats entry for " + command + ": " + value);
    }

    /** A reply that is a flat array of alternating field names and values (SENTINEL MASTER) as a map. */
    static Map<String, String> pairs(Object reply) {
        if (!(reply instanceof List<?> elements) || elements.size() % 2 != 0) {
            throw new IllegalStateException("not a field/value array: " + reply);
        }
        Map<String, String> fields = new LinkedHashMap<>();
        for (int i = 0; i < elements.size(); i += 2) {
            fields.put(String.valueOf(elements.get(i)), String.valueOf(elements.get(i + 1)));
        }
        return fields;
    }
}
