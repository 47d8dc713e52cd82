package dev.ratelimiter.core;

/**
 * IP address literals, read without ever asking DNS: {@code java.net.InetAddress.getByName} and
 * {@code new InetSocketAddress(host, port)} resolve anything that is not a literal, which on a request path means a
 * client choosing which name the gateway looks up, and an event loop waiting for the answer.
 *
 * <p>Addresses are 4 bytes (IPv4) or 16 bytes (IPv6); an IPv4-mapped IPv6 address ({@code ::ffff:192.0.2.1}) is
 * read as the IPv4 address it carries, so a dual-stack socket and an IPv4 one give a client the same bucket.
 */
public final class IpLiteral {

    private IpLiteral() {
    }

    /**
     * The address a literal spells, or null when it is not one: IPv4 dotted quad, IPv6 (with {@code ::}, an IPv4
     * tail and a zone id, which is dropped). No brackets, no port: see {@link #hostOf}.
     */
    public static byte[] parse(String text) {
        if (text == null || text.isEmpty() || text.length() > 64) {
            return null;
        }
        if (text.indexOf(':') < 0) {
            return ipv4(text, 0, text.length());
        }
        int zone = text.indexOf('%');
        return unmapped(ipv6(text, zone < 0 ? text.length() : zone));
    }

    /**
     * The host part of an address as proxies write it: {@code 192.0.2.1}, {@code 192.0.2.1:8080}, {@code 2001:db8::1},
     * {@code [2001:db8::1]}, {@code [2001:db8::1]:8080}. Whitespace around it is ignored; the port is dropped.
     */
    public static String hostOf(String value) {
        String text = value.strip();
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            // after the bracket only a port: anything else ("[1.2.3.4]\"", a smuggled quote) is not an address
            return close > 0 && isPortOrNothing(text, close + 1) ? text.substring(1, close) : "";
        }
        int colon = text.indexOf(':');
        if (colon >= 0 && colon == text.lastIndexOf(':')) {
            // IPv4 with a port (IPv6 has at least two colons); anything but digits after it is not an address
            return isPortOrNothing(text, colon) ? text.substring(0, colon) : "";
        }
        return text;
    }

    private static boolean isPortOrNothing(String text, int from) {
        if (from == text.length()) {
            return true;
        }
        if (text.charAt(from) != ':' || from + 1 == text.length() || text.length() - from > 6) {
            return false;
        }
        for (int i = from + 1; i < text.length(); i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /**
     * The network of {@code address} under a prefix, as a bucket name: {@code 192.0.2.7} at /32,
     * {@code 192.0.2.0/24}, {@code 2001:db8:1:2:0:0:0:0/64}. Every address of one network gives the same text.
     */
    public static String network(byte[] address, int prefix) {
        int bits = address.length * 8;
        byte[] masked = mask(address, prefix);
        StringBuilder text = new StringBuilder(address.length == 4 ? 18 : 44);
        if (address.length == 4) {
            for (int i = 0; i < 4; i++) {
                text.append(i == 0 ? "" : ".").append(masked[i] & 0xff);
            }
        }
        else {
            for (int i = 0; i < 16; i += 2) {
                text.append(i == 0 ? "" : ":").append(Integer.toHexString(((masked[i] & 0xff) << 8) | (masked[i + 1] & 0xff)));
            }
        }
        return prefix >= bits ? text.toString() : text.append('/').append(prefix).toString();
    }

    /** A copy of {@code address} with every bit past {@code prefix} cleared. */
    static byte[] mask(byte[] address, int prefix) {
        byte[] masked = address.clone();
        for (int bit = Math.max(0, prefix); bit < masked.length * 8; bit++) {
            masked[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
        }
        return masked;
    }

    private static byte[] ipv4(String text, int from, int to) {
        byte[] address = new byte[4];
        int part = 0;
        int value = -1;
        int digits = 0;
        for (int i = from; i <= to; i++) {
            char c = i < to ? text.charAt(i) : '.';
            if (c >= '0' && c <= '9') {
                value = (value < 0 ? 0 : value * 10) + (c - '0');
                if (++digits > 3 || value > 255) {
                    return null;
                }
            }
            else if (c == '.' && value >= 0 && part < 4) {
                address[part++] = (byte) value;
                value = -1;
                digits = 0;
            }
            else {
                return null;
            }
        }
        return part == 4 ? address : null;
    }

    private static byte[] ipv6(String text, int to) {
        byte[] address = new byte[16];
        int at = 0;
        int gap = -1;
        int i = 0;
        if (text.startsWith("::")) {
            gap = 0;
            i = 2;
            if (to == 2) {
                return address;
            }
        }
        else if (text.startsWith(":")) {
            return null;
        }
        while (i < to) {
            if (at >= 16) {
                return null;
            }
            int end = i;
            int value = 0;
            while (end < to && Character.digit(text.charAt(end), 16) >= 0 && end - i < 5) {
                value = value * 16 + Character.digit(text.charAt(end), 16);
                end++;
            }
            if (end < to && text.charAt(end) == '.') {
                // an IPv4 tail takes the last 4 bytes
                byte[] tail = at <= 12 ? ipv4(text, i, to) : null;
                if (tail == null) {
                    return null;
                }
                System.arraycopy(tail, 0, address, at, 4);
                at += 4;
                break;
            }
            if (end == i || end - i > 4) {
                return null;
            }
            address[at++] = (byte) (value >>> 8);
            address[at++] = (byte) value;
            if (end == to) {
                break;
            }
            if (text.charAt(end) != ':') {
                return null;
            }
            if (end + 1 < to && text.charAt(end + 1) == ':') {
                if (gap >= 0) {
                    return null;
                }
                gap = at;
                i = end + 2;
                if (i == to) {
                    break;
                }
            }
            else {
                i = end + 1;
                if (i == to) {
                    return null; // a trailing single colon
                }
            }
        }
        if (gap < 0) {
            return at == 16 ? address : null;
        }
        if (at == 16) {
            return null; // "::" must stand for at least one group
        }
        int moved = at - gap;
        System.arraycopy(address, gap, address, 16 - moved, moved);
        java.util.Arrays.fill(address, gap, 16 - moved, (byte) 0);
        return address;
    }

    /** The IPv4 address an IPv4-mapped IPv6 address carries; any other address as it is. */
    static byte[] unmapped(byte[] address) {
        if (address == null || address.length != 16) {
            return address;
        }
        for (int i = 0; i < 10; i++) {
            if (address[i] != 0) {
                return address;
            }
        }
        if (address[10] != (byte) 0xff || address[11] != (byte) 0xff) {
            return address;
        }
        return new byte[] { address[12], address[13], address[14], address[15] };
    }
}
