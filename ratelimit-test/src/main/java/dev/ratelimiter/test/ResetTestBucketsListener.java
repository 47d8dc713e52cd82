package dev.ratelimiter.test;

import org.springframework.test.context.TestContext;
import org.springframework.test.context.support.AbstractTestExecutionListener;

/**
 * Fills every bucket again before each test method of a test whose context has {@link TestBuckets}: a cached
 * context is shared by test classes, and one test's spent tokens must not refuse the next test's requests.
 */
public final class ResetTestBucketsListener extends AbstractTestExecutionListener {

    /** Right after Spring's own dependency injection (2000) and the context's dirtying, before the test's work. */
    @Override
    public int getOrder() {
        return 2_100;
    }

    @Override
    public void beforeTestMethod(TestContext testContext) {
        if (testContext.hasApplicationContext()) {
            testContext.getApplicationContext().getBeanProvider(TestBuckets.class).ifAvailable(TestBuckets::reset);
        }
    }
}
