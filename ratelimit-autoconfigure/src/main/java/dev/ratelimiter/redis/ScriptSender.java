package dev.ratelimiter.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

/**
 * Sends one {@link LimiterScript} call: by SHA ({@code EVALSHA}), and by body ({@code EVAL}) once when Redis
 * answers {@code NOSCRIPT} — after a restart, a failover or {@code SCRIPT FLUSH} — which also caches it there again.
 * Called on the dispatch thread, where the retry by body is queued as well.
 */
final class ScriptSender {

    private final DispatchThread dispatch;

    ScriptSender(DispatchThread dispatch) {
        this.dispatch = dispatch;
    }

    /** Completes {@code result} with the script's reply, on a Lettuce I/O thread. */
    <T> void send(RedisClusterAsyncCommands<String, String> async, LimiterScript script, ScriptOutputType type,
            String[] keys, String[] arguments, CompletableFuture<T> result) {
        send(async, script, type, keys, arguments, result, true);
    }

    private <T> void send(RedisClusterAsyncCommands<String, String> async, LimiterScript script,
            ScriptOutputType type, String[] keys, String[] arguments, CompletableFuture<T> result, boolean bySha) {
        try {
            RedisFuture<T> call = bySha ? async.evalsha(script.sha1(), type, keys, arguments)
                    : async.eval(script.body(), type, keys, arguments);
            call.whenComplete((value, failure) -> {
                if (failure == null) {
                    result.complete(value);
                }
                else if (bySha && unwrap(failure) instanceof RedisNoScriptException) {
                    dispatch.submit(() -> send(async, script, type, keys, arguments, result, false));
                }
                else {
                    result.completeExceptionally(unwrap(failure));
                }
            });
        }
        catch (RuntimeException ex) {
            result.completeExceptionally(ex);
        }
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
