package dev.ratelimiter.autoconfigure.rules;

import java.io.IOException;
import java.io.InputStream;
import java.security.Principal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleChange;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.WriteCondition;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

/**
 * The rules API's operations over {@link RuleAdmin}, for either web stack to serve: the same validation and stored
 * format as the actuator endpoint; reads answer the rules in force with the rule set's version as the {@code ETag};
 * writes need {@code If-Match} or {@code If-None-Match} ({@link EntityTags}) and answer the rule now in force, or a
 * problem ({@link RuleProblems}). Each operation is synchronous: a write waits for the store and for the change to be
 * in force, so a reactive server calls it off its event loop.
 */
public final class RulesApiOperations {

    /**
     * What the API answers, for the web stack to write.
     *
     * @param body a JSON value (a map), the OpenAPI text ({@link #openApi}), or null (no content)
     */
    public record Answer(HttpStatus status, HttpHeaders headers, @Nullable Object body) {
    }

    private final RuleAdmin admin;
    private final RuleSync sync;
    private final RuleView view;
    private final RulesApiAccess access;
    private final String openApi;
    private final RulesApiMount mount;

    RulesApiOperations(RuleAdmin admin, RuleSync sync, RuleView view, RulesApiAccess access, String openApi,
            RulesApiMount mount) {
        this.admin = admin;
        this.sync = sync;
        this.view = view;
        this.access = access;
        this.openApi = openApi;
        this.mount = mount;
    }

    /**
     * The API for the context that serves the actuator, or null where it is not served ({@link RulesApiMount}) or has
     * nothing to change (the rule store switched off, {@code ratelimit.rule-store.enabled=false}: no rule admin).
     * Roles are checked when there are operator accounts, as the filter in front of the API granted them.
     */
    public static @Nullable RulesApiOperations of(ApplicationContext context) {
        RulesApiMount mount = RulesApiMount.of(context.getEnvironment());
        RuleAdmin admin = context.getBeanProvider(RuleAdmin.class).getIfAvailable();
        RuleSync sync = context.getBeanProvider(RuleSync.class).getIfAvailable();
        if (mount == null || admin == null || sync == null) {
            return null;
        }
        RuleView view = new RuleView(sync,
                context.getBeanProvider(RuleSetFactory.class).getObject().definitions().keyring());
        RulesApiAccess access = context.getBeanProvider(OperatorAccounts.class).getIfAvailable() != null
                ? RulesApiAccess.byRole() : RulesApiAccess.OPEN;
        return new RulesApiOperations(admin, sync, view, access,
                RulesApiRoutes.openApi(mount, context.getClassLoader()), mount);
    }

    /** Whether the environment serves the rules API in the context that serves the actuator. */
    public static boolean served(Environment environment) {
        return RulesApiMount.of(environment) != null;
    }

    /** The path of the rule collection in the context that serves the actuator, or null where it is not served. */
    public static @Nullable String mountPath(Environment environment) {
        RulesApiMount mount = RulesApiMount.of(environment);
        return mount != null ? mount.path() : null;
    }

    public RulesApiMount mount() {
        return mount;
    }

    /** The path of the rule collection in the context that serves it ({@code /v1/rules}). */
    public String path() {
        return mount.path();
    }

    /** The path below the collection where the OpenAPI document is served. */
    public static String openApiPath() {
        return RulesApiRoutes.OPENAPI_PATH;
    }

    public Answer list(Principal caller, String instance) {
        return as(caller, false, instance, () -> {
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

    public Answer get(Principal caller, String id, String instance) {
        return as(caller, false, instance, () -> {
            RuleSet rules = sync.rulesInForce();
            Map<String, Object> rule = inForce(id, rules);
            return rule == null ? RuleProblems.answer(instance, HttpStatus.NOT_FOUND, "unknown_rule", null,
                    "There is no rule '" + id + "'.") : ok(rules.version(), rule);
        });
    }

    /**
     * @param body the request's body, read only once the caller's role, the precondition and the content type have
     * passed; it may refuse (a {@code RuleApiRefusal}, 413) past {@link RuleDocumentReader#MAX_BYTES}
     */
    public Answer put(Principal caller, String id, HttpHeaders headers, Supplier<byte[]> body, String instance) {
        return as(caller, true, instance, () -> {
            WriteCondition condition = condition(headers);
            RuleDocumentReader.Read read = RuleDocumentReader.parse(id, headers, body);
            return written(id, admin.put(id, read.settings(), operator(caller), condition), read.document(), false,
                    instance);
        });
    }

    public Answer delete(Principal caller, String id, HttpHeaders headers, String instance) {
        return as(caller, true, instance, () -> written(id, admin.delete(id, operator(caller), condition(headers)),
                null, true, instance));
    }

    /** The API's OpenAPI document, for whoever may read the rules. */
    public Answer openApi(Principal caller, String instance) {
        return as(caller, false, instance, () -> {
            HttpHeaders headers = new HttpHeaders();
            headers.setContentType(MediaType.APPLICATION_YAML);
            return new Answer(HttpStatus.OK, headers, openApi);
        });
    }

    /**
     * Anything else on the API's paths: 404 for a path it does not have, 405 for a method it does not serve; never
     * left to the next handler (a gateway route on the same path) to answer.
     */
    public Answer elsewhere(String method, String instance) {
        if (List.of("GET", "HEAD", "PUT", "DELETE").contains(method)) {
            return RuleProblems.answer(instance, HttpStatus.NOT_FOUND, "not_found", null, "The rules API has no "
                    + instance + ": rules are at <path>/{ruleId}.");
        }
        return RuleProblems.answer(instance, HttpStatus.METHOD_NOT_ALLOWED, "method_not_allowed", null, method
                + " is not an operation of the rules API: GET, PUT and DELETE are.");
    }

    /**
     * The refusal a write gets before its body is read - the caller's role, the precondition, the content type - or
     * null when it passes them.
     */
    public @Nullable Answer refusedBeforeBody(Principal caller, HttpHeaders headers, String instance) {
        return as(caller, true, instance, () -> {
            condition(headers);
            RuleDocumentReader.checkType(headers);
            return null;
        });
    }

    /** A refusal made while the request was read (a body too large), as the API answers it. */
    Answer problem(RuleApiRefusal refusal, String instance) {
        return RuleProblems.answer(instance, refusal.status, refusal.error, refusal.field, refusal.getMessage());
    }

    /**
     * A blocking request's whole body, for {@link #put}'s supplier: at most {@link RuleDocumentReader#MAX_BYTES}
     * read, a refusal (413) past it; a body that cannot be read (the client went away) is a refusal too (400).
     */
    public static byte[] readBody(BodyStream body) {
        try {
            byte[] bytes = body.open().readNBytes(RuleDocumentReader.MAX_BYTES + 1);
            if (bytes.length > RuleDocumentReader.MAX_BYTES) {
                throw RuleDocumentReader.tooLarge();
            }
            return bytes;
        }
        catch (IOException ex) {
            throw new RuleApiRefusal(HttpStatus.BAD_REQUEST, "malformed_document", null,
                    "The rule document could not be read: " + ex.getMessage());
        }
    }

    /** Opens a blocking request's body; opening can fail as reading can (the client went away). */
    @FunctionalInterface
    public interface BodyStream {
        InputStream open() throws IOException;
    }

    /** The caller of a request nobody authenticated (the API on a port that needs no authentication). */
    public static Principal anonymous() {
        return Anonymous.INSTANCE;
    }

    /** Whether the caller may change the rules (the admin role where there are operator accounts). */
    boolean mayWrite(Principal caller) {
        return access.mayWrite(caller);
    }

    /** The caller checked for the role the operation needs, then the operation; 403 without it. */
    @Nullable Answer as(Principal caller, boolean write, String instance, Supplier<@Nullable Answer> operation) {
        if (!(write ? access.mayWrite(caller) : access.mayRead(caller))) {
            return RuleProblems.answer(instance, HttpStatus.FORBIDDEN, "forbidden", null, write
                    ? "Changing limits needs the " + OperatorAccounts.Role.ADMIN.roleName() + " role."
                    : "Reading the rules needs the " + OperatorAccounts.Role.VIEWER.roleName() + " or "
                            + OperatorAccounts.Role.ADMIN.roleName() + " role.");
        }
        try {
            return operation.get();
        }
        catch (RuleApiRefusal refusal) {
            return problem(refusal, instance);
        }
    }

    /** The precondition of a write; a refusal (428, 412) when it names none this API can meet. */
    static WriteCondition condition(HttpHeaders headers) {
        WriteCondition condition = EntityTags.condition(headers);
        if (condition == null) {
            throw new RuleApiRefusal(HttpStatus.PRECONDITION_REQUIRED, "precondition_required", null,
                    "A write names the version it was prepared against, so that it never overwrites a change it did "
                    + "not see: If-Match: \"<version>\" (the ETag of a read), If-Match: * to replace whatever is "
                    + "there, or If-None-Match: * to create a rule that does not exist yet.");
        }
        if (condition.versions().contains(EntityTags.NEVER)) {
            throw new RuleApiRefusal(HttpStatus.PRECONDITION_FAILED, "precondition_failed", null,
                    "If-Match holds no entity tag of this API (a strong tag such as \"17\", the ETag of a read).");
        }
        return condition;
    }

    /** The outcome of a write: the rule now in force (204 for a delete), or the refusal naming the document's field. */
    Answer written(String id, RuleChange change, @Nullable JsonNode document, boolean deleted, String instance) {
        if (change.isApplied()) {
            long version = ((Number) change.written().get("version")).longValue();
            if (deleted) {
                HttpHeaders headers = new HttpHeaders();
                headers.setETag(EntityTags.of(version));
                return new Answer(HttpStatus.NO_CONTENT, headers, null);
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
            return RuleProblems.answer(instance, status, change.error(), change.field(), change.reason());
        }
        // the document's names, in the field and in the sentence: ratelimit.rules.acme.match.api-keys[0] is
        // match.apiKeys[0] here
        String field = RuleDocument.field(id, change.field(), document);
        return RuleProblems.answer(instance, status, change.error(), field,
                change.reason().replace(change.field(), field));
    }

    /** The rule with that id in force, or a runtime rule that switches it off; null when there is neither. */
    private @Nullable Map<String, Object> inForce(String id, RuleSet rules) {
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

    private static Answer ok(long version, Object body) {
        HttpHeaders headers = new HttpHeaders();
        headers.setETag(EntityTags.of(version));
        headers.setContentType(MediaType.APPLICATION_JSON);
        headers.set(HttpHeaders.CACHE_CONTROL, "no-store");
        return new Answer(HttpStatus.OK, headers, body);
    }

    private static String operator(Principal caller) {
        return caller == Anonymous.INSTANCE ? "(unauthenticated)" : caller.getName();
    }

    private enum Anonymous implements Principal {
        INSTANCE;

        @Override
        public String getName() {
            return "(unauthenticated)";
        }
    }
}
