package dev.ratelimiter.testsupport;

import java.io.IOException;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A Redis container, used when a Docker engine is present. The host port is pinned so that a restarted
 * container answers where the old one did, exactly like {@link ProcessRedisServer}.
 */
final class ContainerRedisServer implements RedisServer {

    private static final int REDIS_PORT = 6379;

    private final int hostPort;
    private final GenericContainer<?> container;
    private boolean paused;

    @SuppressWarnings("resource")
    ContainerRedisServer(String image) {
        this.hostPort = LoopbackPorts.free();
        this.container = new GenericContainer<>(DockerImageName.parse(image))
                .withExposedPorts(REDIS_PORT)
                .withCommand("redis-server", "--save", "", "--appendonly", "no")
                .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig().withPortBindings(
                        new PortBinding(Ports.Binding.bindIpAndPort("127.0.0.1", hostPort),
                                new ExposedPort(REDIS_PORT))));
        container.start();
    }

    @Override
    public String host() {
        return "127.0.0.1";
    }

    @Override
    public int port() {
        return hostPort;
    }

    @Override
    public String description() {
        return "container " + container.getDockerImageName() + " on port " + hostPort;
    }

    @Override
    public synchronized void kill() {
        if (paused) {
            resume();
        }
        docker().killContainerCmd(container.getContainerId()).exec();
    }

    @Override
    public synchronized void pause() {
        docker().pauseContainerCmd(container.getContainerId()).exec();
        paused = true;
    }

    @Override
    public synchronized void resume() {
        docker().unpauseContainerCmd(container.getContainerId()).exec();
        paused = false;
    }

    @Override
    public synchronized void restart() {
        kill();
        docker().startContainerCmd(container.getContainerId()).exec();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            try {
                if ("PONG".equals(RedisProtocol.send(host(), hostPort, 500, "PING"))) {
                    return;
                }
            }
            catch (IOException notYet) {
                // keep polling until the deadline
            }
        }
        throw new IllegalStateException("restarted Redis container did not answer PING");
    }

    @Override
    public synchronized boolean isRunning() {
        return container.isRunning() && !paused;
    }

    @Override
    public String command(String... arguments) {
        return RedisProtocol.command(host(), hostPort, arguments);
    }

    @Override
    public void close() {
        container.stop();
    }

    private DockerClient docker() {
        return container.getDockerClient();
    }
}
