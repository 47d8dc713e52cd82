package dev.ratelimiter.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.BooleanOutput;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;

/**
 * Sends one {@link LimiterScript} call: by SHA ({@code EVALSHA}), and by body ({@code EVAL}) once when Redis
 * answers {@code NOSCRIPT} — after a restart, a failover or {@code SCRIPT FLUSH} — which also caches it there again.
 * Called on the dispatch thread, where the retry by body is queued as well.
 *
 * <p>The commands are built here rather than through Lettuce's command interfaces so that a call with a timeout can be
 * a {@link WireTimedCommand}: timed from its write, on the thread that reads its reply. Each attempt (by SHA, then by
 * body) is timed from its own write: a {@code NOSCRIPT} answer is Redis answering.
 */
final class ScriptSender {

    private static final StringCodec CODEC = StringCodec.UTF8;

    private final DispatchThread dispatch;

    ScriptSender(DispatchThread dispatch) {
        this.dispatch = dispatch;
    }

    /**
     * Completes {@code result} with the script's reply, on a Lettuce I/O thread.
     *
     * @param timing how the call is timed once written (see {@link WireTimedCommand}); null: Lettuce's command timeout
     * only
     */
    <T> void send(StatefulConnection<String, String> connection, LimiterScript script, ScriptOutputType type,
            String[] keys, String[] arguments, WireTimedCommand.Timing timing, CompletableFuture<T> result) {
        send(connection, script, type, keys, arguments, timing, result, true);
    }

    private <T> void send(StatefulConnection<String, String> connection, LimiterScript script, ScriptOutputType type,
            String[] keys, String[] arguments, WireTimedCommand.Timing timing, CompletableFuture<T> result,
            boolean bySha) {
        try {
            // A call that tells Redis when it goes stale writes that moment as it is written (StaleAfterCodec).
            CommandArgs<String, String> args = new CommandArgs<>(timing != null && timing.clock() != null
                    ? new StaleAfterCodec(timing.clock(), timing.runWithinNanos(), timing.latestNanos()) : CODEC)
                    .add(bySha ? script.sha1() : script.body()).add(keys.length).addKeys(keys).addValues(arguments);
            Command<String, String, T> command = new Command<>(bySha ? CommandType.EVALSHA : CommandType.EVAL,
                    ScriptSender.<T>output(type), args);
            AsyncCommand<String, String, T> call = timing != null ? new WireTimedCommand<>(command, timing)
                    : new AsyncCommand<>(command);
            connection.dispatch(call);
            call.whenComplete((value, failure) -> {
                if (failure == null) {
                    result.complete(value);
                }
                else if (bySha && unwrap(failure) instanceof RedisNoScriptException) {
                    dispatch.submit(() -> send(connection, script, type, keys, arguments, timing, result, false));
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

    @SuppressWarnings("unchecked")
    private static <T> CommandOutput<String, String, T> output(ScriptOutputType type) {
        return (CommandOutput<String, String, T>) switch (type) {
            case BOOLEAN -> new BooleanOutput<>(CODEC);
            case INTEGER -> new IntegerOutput<>(CODEC);
            case MULTI -> new NestedMultiOutput<>(CODEC);
            case STATUS -> new StatusOutput<>(CODEC);
            case VALUE -> new ValueOutput<>(CODEC);
            default -> throw new IllegalArgumentException("the limiter's scripts answer no " + type);
        };
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
