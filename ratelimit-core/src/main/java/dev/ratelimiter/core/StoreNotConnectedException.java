package dev.ratelimiter.core;

/**
 * A store call made while the connection that would carry it was down: nothing was sent. Made without a stack trace:
 * while the store is away, every decision makes one.
 */
public class StoreNotConnectedException extends IllegalStateException {

    public StoreNotConnectedException(String message) {
        super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
