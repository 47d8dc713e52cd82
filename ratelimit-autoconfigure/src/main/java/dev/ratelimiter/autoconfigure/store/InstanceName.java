package dev.ratelimiter.autoconfigure.store;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.ThreadLocalRandom;

/** How this gateway instance names itself in what it sends out (decision events, region usage). */
public final class InstanceName {

    private InstanceName() {
    }

    /** {@code configured} when set, else {@link #hostAndPid()}. */
    public static String configuredOr(String configured) {
        return configured != null ? configured : hostAndPid();
    }

    /** The host name and process id, {@code host:pid}; {@code unknown-host} when the host name cannot be found. */
    public static String hostAndPid() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        }
        catch (UnknownHostException ex) {
            host = "unknown-host";
        }
        return host + ":" + ManagementFactory.getRuntimeMXBean().getPid();
    }

    /**
     * {@code host:pid:random}: the random part keeps apart two gateways of one region in one JVM (tests), which
     * the rebalancer would otherwise count as one instance.
     */
    public static String unique() {
        return hostAndPid() + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    }
}
