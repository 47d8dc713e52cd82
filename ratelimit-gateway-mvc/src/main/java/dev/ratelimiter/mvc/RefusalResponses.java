package dev.ratelimiter.mvc;

import java.io.IOException;

import dev.ratelimiter.gateway.RefusalRenderer;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.servlet.function.ServerResponse;

/** The limiter's rendered refusals as Spring MVC answers them: a handler's response, or written on the servlet's. */
final class RefusalResponses {

    private RefusalResponses() {
    }

    /** As a handler's answer. */
    static ServerResponse of(RefusalRenderer.Rendered refusal) {
        return ServerResponse.status(refusal.status()).headers(sent -> sent.addAll(refusal.headers()))
                .body(refusal.body());
    }

    /**
     * Written on a response nothing has been sent on yet, in place of whatever was buffered for it: the rate-limit
     * fields set for an earlier decision stay, the refusal's own replace them.
     */
    static void write(RefusalRenderer.Rendered refusal, HttpServletResponse response) throws IOException {
        response.resetBuffer();
        response.setStatus(refusal.status().value());
        refusal.headers().forEach((name, values) -> {
            for (int i = 0; i < values.size(); i++) {
                if (i == 0) {
                    response.setHeader(name, values.get(0));
                }
                else {
                    response.addHeader(name, values.get(i));
                }
            }
        });
        response.setContentLength(refusal.body().length);
        response.getOutputStream().write(refusal.body());
        response.flushBuffer();
    }
}
