package dev.ratelimiter.core;

import java.util.concurrent.TimeoutException;

/**
 * The store did not answer in time. Made without a stack trace: an overloaded gateway can make thousands a second,
 * and a filled-in stack costs more CPU than the decision it stands for.
 */
public final class StoreTimeoutException extends TimeoutException {

    public StoreTimeoutException(String message) {
        super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
