package dev.ratelimiter.autoconfigure;

import java.security.Principal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleChange;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.WriteCondition;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;

/**
 * The rules API's operations over {@link RuleAdmin}, the same validation and stored format as the actuator endpoint:
 * reads answer the rules in force with the rule set's version as the {@code ETag}; writes need {@code If-Match} or
 * {@code If-None-Match} ({@link EntityTags}) and answer the rule now in force, or a problem ({@link RuleProblems}).
 */
final class RulesApiHandler {

    private final RuleAdmin admin;
    private final RuleSync sync;
    private final RuleView view;
    private final RulesApiAccess access;
    private final String openApi;

    RulesApiHandler(RuleAdmin admin, RuleSync sync, RuleView view, RulesApiAccess access, String openApi) {
        this.admin = admin;
        this.sync = sync;
        this.view = view;
        this.access = access;
        this.openApi = openApi;
    }

    Mono<ServerResponse> list(ServerRequest request) {
        return as(request, false, caller -> {
            RuleSet rules = sync.rulesInForce();
            List<Map<String, Object>> all = new ArrayList<>();
            rules.rules().values().forEach(rule -> all.add(describe(rule.id(), rule)));
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("version", rules.version());
            body.put("ruleStore", sync.status().state());
            body.put("rules", all);
            return ok(rules.version(), body);
        });
    }

    Mono<ServerResponse> get(ServerRequest request) {
        String id = request.pathVariable("ruleId");
        return as(request, false, caller -> {
            RuleSet rules = sync.rulesInForce();
            Map<String, Object> rule = inForce(id, rules);
            return rule == null ? RuleProblems.of(request, HttpStatus.NOT_FOUND, "unknown_rule", null,
                    "There is no rule '" + id + "'.") : ok(rules.version(), rule);
        });
    }

    Mono<ServerResponse> put(ServerRequest request) {
        String id = request.pathVariable("ruleId");
        return as(request, true, caller -> condition(request).flatMap(condition -> RuleDocumentReader.read(request, id)
                .flatMap(read -> change(() -> admin.put(id, read.settings(), operator(caller), condition))
                        .flatMap(change -> answer(request, id, change, read.document())))));
    }

    Mono<ServerResponse> delete(ServerRequest request) {
        String id = request.pathVariable("ruleId");
        return as(request, true, caller -> condition(request).flatMap(condition ->
                change(() -> admin.delete(id, operator(caller), condition))
                        .flatMap(change -> answer(request, id, change, null))));
    }

    /** The API's OpenAPI document, for whoever may read the rules. */
    Mono<ServerResponse> openApi(ServerRequest request) {
        return as(request, false, caller -> ServerResponse.ok().contentType(MediaType.APPLICATION_YAML)
                .bodyValue(openApi));
    }

    /**
     * Anything else on the API's paths: 404 for a path it does not have, 405 for a method it does not serve; never
     * left to the next handler (a gateway route on the same path) to answer.
     */
    Mono<ServerResponse> elsewhere(ServerRequest request) {
        String method = request.method().name();
        if (List.of("GET", "HEAD", "PUT", "DELETE").contains(method)) {
            return RuleProblems.of(request, HttpStatus.NOT_FOUND, "not_found", null, "The rules API has no "
                    + request.requestPath().pathWithinApplication().value() + ": rules are at <path>/{ruleId}.");
        }
        return RuleProblems.of(request, HttpStatus.METHOD_NOT_ALLOWED, "method_not_allowed", null, method
                + " is not an operation of the rules API: GET, PUT and DELETE are.");
    }

    /** The caller checked for the role the operation needs, then the operation; 403 without it. */
    private Mono<ServerResponse> as(ServerRequest request, boolean write,
            Function<Principal, Mono<ServerResponse>> operation) {
        return request.principal().map(caller -> (Principal) caller).defaultIfEmpty(Anonymous.INSTANCE)
                .flatMap(caller -> (write ? access.mayWrite(caller) : access.mayRead(caller)) ? operation.apply(caller)
                        : RuleProblems.of(request, HttpStatus.FORBIDDEN, "forbidden", null, (write
                                ? "Changing limits needs the " + OperatorAccounts.Role.ADMIN.roleName() + " role."
                                : "Reading the rules needs the " + OperatorAccounts.Role.VIEWER.roleName() + " or "
                                        + OperatorAccounts.Role.ADMIN.roleName() + " role.")))
                .onErrorResume(RuleApiRefusal.class, refusal -> RuleProblems.of(request, refusal.status, refusal.error,
                        refusal.field, refusal.getMessage()))
                .flatMap(response -> drained(request).thenReturn(response));
    }

    /**
     * The request's body read to its end before the answer, when the answer did not need it (a refused write): a
     * connection whose request was not read to its end is not read again, and the client's next request on it would
     * wait for an answer that never comes.
     */
    private static Mono<Void> drained(ServerRequest request) {
        return request.bodyToFlux(DataBuffer.class).doOnNext(DataBufferUtils::release).then()
                // already read (the rule document): nothing left
                .onErrorResume(IllegalStateException.class, alreadyRead -> Mono.empty());
    }

    private static Mono<WriteCondition> condition(ServerRequest request) {
        WriteCondition condition = EntityTags.condition(request.headers().asHttpHeaders());
        if (condition == null) {
            return Mono.error(new RuleApiRefusal(HttpStatus.PRECONDITION_REQUIRED, "precondition_required", null,
                    "A write names the version it was prepared against, so that it never overwrites a change it did "
                    + "not see: If-Match: \"<version>\" (the ETag of a read), If-Match: * to replace whatever is "
                    + "there, or If-None-Match: * to create a rule that does not exist yet."));
        }
        if (condition.versions().contains(EntityTags.NEVER)) {
            return Mono.error(new RuleApiRefusal(HttpStatus.PRECONDITION_FAILED, "precondition_failed", null,
                    "If-Match holds no entity tag of this API (a strong tag such as \"17\", the ETag of a read)."));
        }
        return Mono.just(condition);
    }

    /** RuleAdmin waits for the store and for the change to be in force: off the event loop. */
    private static Mono<RuleChange> change(Supplier<RuleChange> change) {
        return Mono.fromSupplier(change).subscribeOn(Schedulers.boundedElastic());
    }

    private Mono<ServerResponse> answer(ServerRequest request, String id, RuleChange change, JsonNode document) {
        if (change.isApplied()) {
            long version = ((Number) change.written().get("version")).longValue();
            if (request.method().name().equals("DELETE")) {
                return ServerResponse.noContent().eTag(EntityTags.of(version)).build();
            }
            Map<String, Object> rule = inForce(id, sync.rulesInForce());
            return ok(version, rule != null ? rule : Map.of("id", id));
        }
        HttpStatus status = switch (change.outcome()) {
            case INVALID -> "id".equals(change.field()) ? HttpStatus.BAD_REQUEST : HttpStatus.UNPROCESSABLE_CONTENT;
            case NOT_FOUND -> HttpStatus.NOT_FOUND;
            case CONFLICT -> HttpStatus.CONFLICT;
            case PRECONDITION_FAILED -> HttpStatus.PRECONDITION_FAILED;
            default -> HttpStatus.SERVICE_UNAVAILABLE;
        };
        if (document == null || change.outcome() != RuleChange.Outcome.INVALID || change.field() == null) {
            return RuleProblems.of(request, status, change.error(), change.field(), change.reason());
        }
        // the document's names, in the field and in the sentence: ratelimit.rules.acme.match.api-keys[0] is
        // match.apiKeys[0] here
        String field = RuleDocument.field(id, change.field(), document);
        return RuleProblems.of(request, status, change.error(), field, change.reason().replace(change.field(), field));
    }

    /** The rule with that id in force, or a runtime rule that switches it off; null when there is neither. */
    private Map<String, Object> inForce(String id, RuleSet rules) {
        Rule rule = rules.rules().get(id);
        if (rule != null) {
            return describe(id, rule);
        }
        if (sync.runtime().specs().containsKey(id)) {
            Map<String, Object> off = new LinkedHashMap<>();
            off.put("id", id);
            off.put("source", "runtime");
            off.put("enabled", false);
            return off;
        }
        return null;
    }

    private Map<String, Object> describe(String id, Rule rule) {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("id", id);
        view.describe(rule).forEach((name, value) -> {
            if (value != null) {
                described.put(name, value);
            }
        });
        return described;
    }

    private static Mono<ServerResponse> ok(long version, Object body) {
        return ServerResponse.ok().eTag(EntityTags.of(version)).contentType(MediaType.APPLICATION_JSON)
                .header(HttpHeaders.CACHE_CONTROL, "no-store").bodyValue(body);
    }

    private static String operator(Principal caller) {
        return caller == Anonymous.INSTANCE ? "(unauthenticated)" : caller.getName();
    }

    /** The caller of a request nobody authenticated (the API on a port that needs no authentication). */
    private enum Anonymous implements Principal {
        INSTANCE;

        @Override
        public String getName() {
            return "(unauthenticated)";
        }
    }
}
