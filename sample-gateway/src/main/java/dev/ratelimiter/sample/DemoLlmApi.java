package dev.ratelimiter.sample;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A stub that answers {@code POST /v1/chat/completions} like an LLM API, so that the sample can show tokens charged
 * from the response: a JSON answer with {@code usage: {prompt_tokens, completion_tokens, total_tokens}}, or with
 * {@code "stream": true} server-sent events, one chunk per word, the usage in the last chunk before
 * {@code data: [DONE]}. The numbers are derived from the request: a prompt token per 4 bytes of the body, and
 * {@code max_tokens} (default 200) completion tokens.
 */
final class DemoLlmApi {

    private static final Pattern MAX_TOKENS = Pattern.compile("\"max_tokens\"\\s*:\\s*(\\d{1,7})");
    private static final Pattern STREAM = Pattern.compile("\"stream\"\\s*:\\s*true");
    private static final int MAX_BODY = 64 * 1024;
    private static final String[] WORDS = "This is the demo upstream answering like an LLM API".split(" ");

    private DemoLlmApi() {
    }

    static Publisher<Void> chatCompletions(HttpServerRequest request, HttpServerResponse response) {
        return request.receive().aggregate().asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                .flatMap(body -> answer(body, response));
    }

    private static Mono<Void> answer(String body, HttpServerResponse response) {
        if (body.length() > MAX_BODY) {
            return response.status(413).send().then();
        }
        long prompt = Math.max(1, body.getBytes(StandardCharsets.UTF_8).length / 4);
        Matcher max = MAX_TOKENS.matcher(body);
        long completion = max.find() ? Long.parseLong(max.group(1)) : 200;
        String usage = "{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":" + completion + ",\"total_tokens\":"
                + (prompt + completion) + "}";
        if (!STREAM.matcher(body).find()) {
            return response.header("Content-Type", "application/json")
                    .sendString(Mono.just("{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion\",\"model\":\"demo\","
                            + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\""
                            + String.join(" ", WORDS) + "\"},\"finish_reason\":\"stop\"}],\"usage\":" + usage + "}"),
                            StandardCharsets.UTF_8)
                    .then();
        }
        List<String> events = new ArrayList<>();
        for (String word : WORDS) {
            events.add("data: {\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
                    + "\"delta\":{\"content\":\"" + word + " \"}}],\"usage\":null}\n\n");
        }
        events.add("data: {\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":"
                + usage + "}\n\n");
        events.add("data: [DONE]\n\n");
        return response.header("Content-Type", "text/event-stream")
                .sendString(Flux.fromIterable(events).delayElements(Duration.ofMillis(20)), StandardCharsets.UTF_8)
                .then();
    }
}
