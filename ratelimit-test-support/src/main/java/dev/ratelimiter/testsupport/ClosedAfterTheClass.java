package dev.ratelimiter.testsupport;

import java.util.List;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Closes a test class's servers once the class is done: after its {@code @AfterAll} methods and after every
 * {@code afterAll} callback, Spring's closing of a {@code @DirtiesContext} context included. Register it on a static
 * field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final ClosedAfterTheClass servers = ClosedAfterTheClass.of(cluster, upstream);
 * }</pre>
 *
 * <p>Why the order matters: a context closed after its Redis is gone shuts its Lettuce client down while that client
 * is reconnecting, which can wait without a limit (lettuce#2278); a context left open in Spring's test-context cache
 * with its Redis gone keeps reconnecting, logging and polling until the test JVM ends, and a suite of such contexts
 * loaded the machine enough for another class's health call to wait 30 s. Closed first, on a live server, it stops
 * at once. JUnit closes the {@link AutoCloseable}s of a class's store when the class ends, after all its callbacks.
 */
public final class ClosedAfterTheClass implements BeforeAllCallback {

    private final List<AutoCloseable> resources;

    private ClosedAfterTheClass(List<AutoCloseable> resources) {
        this.resources = resources;
    }

    public static ClosedAfterTheClass of(AutoCloseable... resources) {
        return new ClosedAfterTheClass(List.of(resources));
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        closeWhenTheClassEnds(context, this, () -> {
            for (AutoCloseable resource : resources) {
                resource.close();
            }
        });
    }

    /** Closes {@code resource} when the class of {@code context} ends, after every callback of that class. */
    static void closeWhenTheClassEnds(ExtensionContext context, Object owner, AutoCloseable resource) {
        context.getStore(ExtensionContext.Namespace.create(ClosedAfterTheClass.class, owner))
                .put("resources", resource);
    }
}
