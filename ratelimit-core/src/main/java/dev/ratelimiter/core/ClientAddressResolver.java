package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The client's address as a bucket name, believing forwarding headers only as far as they were written by proxies
 * the operator trusts.
 *
 * <p>The chain is walked from the connecting peer outwards: while the hop at hand is a trusted proxy, the entry it
 * appended (the right-most one not yet read) names the hop before it. The first hop that is not trusted is the client
 * — everything to its left was written by the client itself and is ignored. So a client that reaches the gateway
 * directly, or sends its own {@code X-Forwarded-For} through the proxies, can never choose its bucket. An entry that
 * is not an address literal ({@code unknown}, a name, garbage) is never looked up: the trusted proxy that passed it on
 * counts as the client, so garbage shares one bucket instead of making new ones.
 *
 * <p>One header is read, the one the operator's proxies write: {@code X-Forwarded-For} (nginx, ingress-nginx, AWS
 * ALB, Envoy) or the RFC 7239 {@code Forwarded} header ({@code for=} parameters). Never the other: a proxy passes a
 * header it does not write through untouched, so whatever it holds was written by the client. Ports are dropped. A
 * {@code Forwarded} line with an unbalanced quote is not read at all (a client's open quote would otherwise swallow
 * the entry the proxy appended after it); {@code X-Forwarded-For} has no quoting. The address is then cut to a network: IPv4 /32 and IPv6 /64 by default,
 * because one IPv6 subscriber holds a whole /64 and could otherwise take 2^64 buckets.
 */
public final class ClientAddressResolver {

    /** Most forwarding entries read from the right; a longer chain than this is not one the operator built. */
    static final int MAX_HOPS = 32;

    /** The forwarding header the trusted proxies write. */
    public enum Header {
        /** {@code X-Forwarded-For: client, proxy1, proxy2}. */
        X_FORWARDED_FOR("X-Forwarded-For"),
        /** RFC 7239 {@code Forwarded: for=client, for="[2001:db8::1]:443"}. */
        FORWARDED("Forwarded");

        private final String headerName;

        Header(String headerName) {
            this.headerName = headerName;
        }

        /** The HTTP header's name. */
        public String headerName() {
            return headerName;
        }
    }

    private final List<Cidr> trustedProxies;
    private final Header header;
    private final int ipv4Prefix;
    private final int ipv6Prefix;

    /**
     * @param trustedProxies addresses or CIDR blocks of the proxies in front of the gateway ({@code 10.0.0.0/8},
     * {@code 2001:db8::/32}, {@code 192.0.2.10}); empty: forwarding headers are ignored
     * @param ipv4Prefix bits of an IPv4 client address that name its bucket (1–32)
     * @param ipv6Prefix bits of an IPv6 client address that name its bucket (1–128)
     */
    public ClientAddressResolver(List<String> trustedProxies, int ipv4Prefix, int ipv6Prefix) {
        this(trustedProxies, Header.X_FORWARDED_FOR, ipv4Prefix, ipv6Prefix);
    }

    /**
     * @param trustedProxies addresses or CIDR blocks of the proxies in front of the gateway
     * @param header the forwarding header those proxies write; the other is ignored
     * @param ipv4Prefix bits of an IPv4 client address that name its bucket (1–32)
     * @param ipv6Prefix bits of an IPv6 client address that name its bucket (1–128)
     */
    public ClientAddressResolver(List<String> trustedProxies, Header header, int ipv4Prefix, int ipv6Prefix) {
        this.header = header;
        if (ipv4Prefix < 1 || ipv4Prefix > 32) {
            throw new IllegalArgumentException("ipv4-prefix must be between 1 and 32, but was " + ipv4Prefix);
        }
        if (ipv6Prefix < 1 || ipv6Prefix > 128) {
            throw new IllegalArgumentException("ipv6-prefix must be between 1 and 128, but was " + ipv6Prefix);
        }
        List<Cidr> parsed = new ArrayList<>();
        for (String proxy : trustedProxies) {
            parsed.add(Cidr.parse(proxy));
        }
        this.trustedProxies = List.copyOf(parsed);
        this.ipv4Prefix = ipv4Prefix;
        this.ipv6Prefix = ipv6Prefix;
    }

    /** Whether any proxy is trusted, i.e. whether forwarding headers are worth reading at all. */
    public boolean readsForwardingHeaders() {
        return !trustedProxies.isEmpty();
    }

    /** The forwarding header read. */
    public Header header() {
        return header;
    }

    /**
     * The client's network for a request.
     *
     * @param peer the connecting peer's address (4 or 16 bytes), or null when the server does not know it
     * @param forwardingLines the lines of the configured {@linkplain #header() forwarding header}, in order (empty
     * when absent)
     * @return the bucket name of the client's network, or null when the peer is unknown
     */
    public String resolve(byte[] peer, List<String> forwardingLines) {
        if (peer == null) {
            return null;
        }
        byte[] client = IpLiteral.unmapped(peer);
        if (isTrusted(client)) {
            List<String> chain = entries(forwardingLines, header == Header.FORWARDED);
            for (int i = chain.size() - 1; i >= 0 && isTrusted(client); i--) {
                byte[] previous = IpLiteral.parse(chain.get(i));
                if (previous == null) {
                    break; // not an address: the trusted proxy that passed it on is the client
                }
                client = previous;
            }
        }
        return IpLiteral.network(client, client.length == 4 ? ipv4Prefix : ipv6Prefix);
    }

    private boolean isTrusted(byte[] address) {
        for (Cidr proxy : trustedProxies) {
            if (proxy.contains(address)) {
                return true;
            }
        }
        return false;
    }

    /** The hosts of the right-most {@value #MAX_HOPS} entries of the header lines, left to right. */
    private static List<String> entries(List<String> lines, boolean rfc7239) {
        List<String> hosts = new ArrayList<>();
        for (String line : lines) {
            if (rfc7239 && line.chars().filter(c -> c == '"').count() % 2 != 0) {
                hosts.add(""); // an unbalanced quote: nothing on this line is believed
                continue;
            }
            for (String element : rfc7239 ? split(line, ',') : List.of(line.split(",", -1))) {
                String host = rfc7239 ? forOf(element) : IpLiteral.hostOf(element);
                hosts.add(host);
            }
        }
        return hosts.size() <= MAX_HOPS ? hosts : hosts.subList(hosts.size() - MAX_HOPS, hosts.size());
    }

    /** The host of an RFC 7239 element's {@code for=} parameter; "" when it has none. */
    private static String forOf(String element) {
        for (String pair : split(element, ';')) {
            int equals = pair.indexOf('=');
            if (equals > 0 && pair.substring(0, equals).strip().toLowerCase(Locale.ROOT).equals("for")) {
                String value = pair.substring(equals + 1).strip();
                if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                    value = value.substring(1, value.length() - 1);
                }
                return IpLiteral.hostOf(value);
            }
        }
        return "";
    }

    /** Splits on {@code separator} outside double quotes. */
    private static List<String> split(String text, char separator) {
        List<String> parts = new ArrayList<>();
        boolean quoted = false;
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"') {
                quoted = !quoted;
            }
            else if (c == separator && !quoted) {
                parts.add(text.substring(start, i));
                start = i + 1;
            }
        }
        parts.add(text.substring(start));
        return parts;
    }

    /** An address block: a network and how many leading bits of an address must equal it. */
    record Cidr(byte[] network, int prefix) {

        static Cidr parse(String text) {
            String trimmed = text == null ? "" : text.strip();
            int slash = trimmed.indexOf('/');
            String host = slash < 0 ? trimmed : trimmed.substring(0, slash);
            byte[] address = IpLiteral.parse(host);
            if (address == null) {
                throw new IllegalArgumentException("trusted proxy '" + text + "' is not an IP address or CIDR block "
                        + "(for example 10.0.0.0/8, 192.0.2.10 or 2001:db8::/32); names are not accepted, because "
                        + "they would be looked up in DNS");
            }
            int bits = address.length * 8;
            int prefix = bits;
            if (slash >= 0) {
                try {
                    prefix = Integer.parseInt(trimmed.substring(slash + 1));
                }
                catch (NumberFormatException ex) {
                    prefix = -1;
                }
                if (prefix < 0 || prefix > bits) {
                    throw new IllegalArgumentException("trusted proxy '" + text + "' has prefix '"
                            + trimmed.substring(slash + 1) + "'; it must be a whole number from 0 to " + bits);
                }
            }
            return new Cidr(IpLiteral.mask(address, prefix), prefix);
        }

        boolean contains(byte[] address) {
            if (address.length != network.length) {
                return false;
            }
            int full = prefix / 8;
            for (int i = 0; i < full; i++) {
                if (address[i] != network[i]) {
                    return false;
                }
            }
            int rest = prefix % 8;
            if (rest == 0) {
                return true;
            }
            int mask = 0xff << (8 - rest) & 0xff;
            return (address[full] & mask) == (network[full] & mask);
        }
    }
}
