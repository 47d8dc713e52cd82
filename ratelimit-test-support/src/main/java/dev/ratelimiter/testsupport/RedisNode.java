package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * One {@code redis-server} process of a {@link RedisCluster} or {@link RedisSentinel}: a data node or a
 * sentinel, with the fault controls of a {@link RedisServer} and the statistics tests assert on.
 *
 * <p>Role changes (failover, a restarted primary rejoining as a replica) are the topology's business: ask the
 * fixture who is primary now, or {@link #role()}, rather than remembering what a node was.
 */
public final class RedisNode implements RedisServer {

    /** The commands that run a script or function, for {@link #scriptCalls()}. */
    static final List<String> SCRIPT_COMMANDS = List.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro");

    private final ProcessRedisServer process;
    private final boolean clusterNode;
    private volatile String id;

    RedisNode(ProcessRedisServer process, boolean clusterNode) {
        this.process = process;
        this.clusterNode = clusterNode;
        this.id = readId();
    }

    @Override
    public String host() {
        return process.host();
    }

    @Override
    public int port() {
        return process.port();
    }

    /** {@code 127.0.0.1:port}, as Spring Boot's {@code cluster.nodes} and {@code sentinel.nodes} list nodes. */
    public String address() {
        return host() + ":" + port();
    }

    /**
     * The cluster node ID ({@code CLUSTER MYID}) for a cluster node, which survives {@link #restart()} because
     * {@code nodes.conf} is kept; the {@code run_id} otherwise, which a restart changes. Known even while the
     * node is down: it is the ID read at the last (re)start.
     */
    public String id() {
        return id;
    }

    @Override
    public String description() {
        return process.description();
    }

    @Override
    public String command(String... arguments) {
        return process.command(arguments);
    }

    /** The role this node reports now ({@code ROLE}): {@code master}, {@code slave} or {@code sentinel}. */
    public String role() {
        Object reply = reply("ROLE");
        if (reply instanceof List<?> elements && !elements.isEmpty()) {
            return String.valueOf(elements.get(0));
        }
        throw new IllegalStateException("unexpected ROLE reply from " + address() + ": " + reply);
    }

    /** One {@code INFO} section as field → value (e.g. {@code info("replication").get("role")}). */
    public Map<String, String> info(String section) {
        return RedisReplies.infoFields(command("INFO", section));
    }

    /**
     * How many times {@code command} (e.g. {@code "evalsha"}) ran since start or {@link #resetStats()}, from
     * {@code INFO commandstats}; 0 if never. Subcommands are named as Redis 7 names them, e.g. {@code client|setname}.
     */
    public long commandCalls(String command) {
        return RedisReplies.commandCalls(command("INFO", "commandstats"), command);
    }

    /** Script and function executions: the sum of EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, FCALL and FCALL_RO calls. */
    public long scriptCalls() {
        String stats = command("INFO", "commandstats");
        return SCRIPT_COMMANDS.stream().mapToLong(command -> RedisReplies.commandCalls(stats, command)).sum();
    }

    /** Zeroes the statistics ({@code CONFIG RESETSTAT}), so a test counts only its own commands. */
    public void resetStats() {
        command("CONFIG", "RESETSTAT");
    }

    @Override
    public void kill() {
        process.kill();
    }

    @Override
    public void pause() {
        process.pause();
    }

    @Override
    public void resume() {
        process.resume();
    }

    /**
     * Starts the node again on the same port with the same command line and directory, empty of data. A
     * cluster node comes back with its ID and cluster configuration and, if it was failed over meanwhile,
     * rejoins as a replica of its successor; a sentinel-managed node is reconfigured by the sentinels.
     * Returns once the node answers PING; use the fixture's {@code awaitHealthy} to wait for the topology.
     */
    @Override
    public void restart() {
        process.restart();
        id = readId();
    }

    @Override
    public boolean isRunning() {
        return process.isRunning();
    }

    /** Stops the node for good; the fixture's {@code close()} does this for every node. */
    @Override
    public void close() {
        process.close();
    }

    @Override
    public String toString() {
        return address() + (clusterNode ? " " + id : "");
    }

    /** The reply with its structure kept; see {@link RedisProtocol#call}. */
    Object reply(String... arguments) {
        try {
            return RedisProtocol.call(host(), port(), RedisProtocol.COMMAND_TIMEOUT_MILLIS, arguments);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Redis command " + String.join(" ", arguments) + " to " + address()
                    + " failed", ex);
        }
    }

    Path workingDirectory() {
        return process.workingDirectory();
    }

    private String readId() {
        if (clusterNode) {
            return command("CLUSTER", "MYID");
        }
        return info("server").get("run_id");
    }
}
