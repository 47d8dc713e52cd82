package dev.ratelimiter.gateway;

/**
 * Changes the answers the limiter writes itself — 429 (over a limit), 503 (the limiter cannot check, or the upstream
 * is shedding) and the 400/401/403 answers to requests whose identity it refuses — before they are sent: status,
 * headers and the problem body, a {@link org.springframework.http.ProblemDetail}. Declare any number as beans; they
 * run in
 * {@link org.springframework.core.annotation.Order @Order} / {@link org.springframework.core.Ordered} order, each
 * seeing what the ones before it left.
 *
 * <pre>{@code
 * @Bean
 * RateLimitResponseCustomizer supportLink() {
 *     return (refusal, context) -> {
 *         if (context.kind() == Refusal.Kind.RATE_LIMITED) {
 *             ProblemDetail problem = refusal.getProblemDetail();
 *             problem.setProperty("support", "https://example.com/limits");
 *             problem.setDetail(problem.getDetail() + " Upgrade your plan for more.");
 *             refusal.getHeaders().set("X-Plan-Upgrade", "https://example.com/pricing");
 *         }
 *     };
 * }
 * }</pre>
 *
 * <p>Customizers run on the connection's event loop, for every refusal — under attack that is a flood of them: they
 * must be quick and must never block (no I/O, no locks held for long). A customizer that throws, or sets a status
 * below 400, is reported (at most once a minute in the log) and the default refusal is sent instead: a customizer
 * can never turn a refusal into a 500 nor let the refused request through.
 *
 * <p>With no customizer the limiter writes its default bodies as prebuilt text; the mutable {@link Refusal} is made
 * only when at least one customizer is registered. {@link Refusal#getBody()}, the body as a map, still works for
 * customizers written against it, and is deprecated.
 */
@FunctionalInterface
public interface RateLimitResponseCustomizer {

    /**
     * @param refusal the answer about to be written, to change in place
     * @param context what was refused and why; read-only
     */
    void customize(Refusal refusal, RefusalContext context);
}
