package dev.ratelimiter.autoconfigure.rules;

import java.security.Principal;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;

import dev.ratelimiter.autoconfigure.KafkaBootstrapServers;
import dev.ratelimiter.autoconfigure.RulesApiProperties;
import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.WhatIfReplay;
import dev.ratelimiter.core.WhatIfReport;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.JsonNode;

/**
 * {@code POST <rules>/{ruleId}/what-if}: what a proposed rule would have refused of the traffic recorded in a time
 * range, from the decision-event topic, before it is even in shadow ({@link WhatIfReplay}). It changes nothing, yet it
 * is the admin's: it reads every client's recorded traffic and costs this instance a Kafka read and a replay, and as a
 * POST it is what the operator filter gives the admin alone (a viewer's reads are GET and HEAD). What it costs is
 * bounded too: a range of at most {@code max-range} and {@code max-events}, one deadline, and {@code max-concurrent}
 * replays at once. Synchronous: a reactive server calls it off its event loop.
 */
public final class WhatIfOperations {

    /** Below a rule, where the rules API has nothing: rule ids hold no '/'. */
    public static final String PATH = "/{ruleId}/what-if";

    private final RulesApiOperations api;
    private final RuleAdmin admin;
    private final ClientIdKeyring keyring;
    private final @Nullable WhatIfEvents events;
    private final RulesApiProperties.WhatIf settings;
    private final Semaphore running;

    WhatIfOperations(RulesApiOperations api, RuleAdmin admin, ClientIdKeyring keyring, @Nullable WhatIfEvents events,
            RulesApiProperties.WhatIf settings) {
        this.api = api;
        this.admin = admin;
        this.keyring = keyring;
        this.events = events;
        this.settings = settings;
        this.running = new Semaphore(Math.max(1, settings.getMaxConcurrent()));
    }

    /**
     * The replay beside the rules API, reading the topic the gateway's events go to; without Kafka configured (or its
     * client on the class path) it answers 409 and says so.
     */
    public static WhatIfOperations of(ApplicationContext context, RulesApiOperations api) {
        Environment environment = context.getEnvironment();
        Binder binder = Binder.get(environment);
        RulesApiProperties.WhatIf settings = binder.bind(RulesApiMount.PREFIX + ".what-if",
                RulesApiProperties.WhatIf.class).orElseGet(RulesApiProperties.WhatIf::new);
        return new WhatIfOperations(api, context.getBean(RuleAdmin.class),
                context.getBean(RuleSetFactory.class).definitions().keyring(), kafkaEvents(environment, binder),
                settings);
    }

    private static @Nullable WhatIfEvents kafkaEvents(Environment environment, Binder binder) {
        String servers = KafkaBootstrapServers.forEvents(environment);
        boolean enabled = binder.bind("ratelimit.events.kafka.enabled", Boolean.class).orElse(true);
        ClassLoader loader = WhatIfOperations.class.getClassLoader();
        if (servers == null || !enabled || !ClassUtils.isPresent("org.apache.kafka.clients.consumer.KafkaConsumer",
                loader) || !ClassUtils.isPresent("dev.ratelimiter.kafka.DecisionEventRange", loader)) {
            return null;
        }
        return new KafkaWhatIfEvents(servers,
                binder.bind("ratelimit.events.kafka.topic", String.class).orElse("ratelimit.decisions"));
    }

    /**
     * @param body {@code {"rule": <rule document>, "from": <instant>, "to": <instant>}}, read only once the caller's
     * role and the content type have passed
     */
    public RulesApiOperations.Answer whatIf(Principal caller, String id, HttpHeaders headers, Supplier<byte[]> body,
            String instance) {
        if (!api.mayWrite(caller)) {
            return RuleProblems.answer(instance, HttpStatus.FORBIDDEN, "forbidden", null, "A what-if replay needs "
                    + "the " + OperatorAccounts.Role.ADMIN.roleName() + " role: it reads every client's recorded "
                    + "traffic and costs this instance a Kafka read.");
        }
        return api.as(caller, false, instance, () -> {
            RuleDocumentReader.checkType(headers);
            JsonNode request = RuleDocumentReader.tree(body.get(), "what-if request body");
            Instant from = instant(request, "from");
            Instant to = instant(request, "to");
            checkRange(from, to);
            WhatIfReplay.Traffic traffic = traffic(request);
            WhatIfReplay replay = replay(id, request, traffic);
            if (events == null) {
                return RuleProblems.answer(instance, HttpStatus.CONFLICT, "events_not_configured", null,
                        "A what-if replays the decision events recorded in Kafka, and this gateway sends none there: "
                        + "set ratelimit.events.kafka.bootstrap-servers (or spring.kafka.bootstrap-servers) and "
                        + "put spring-kafka on the class path.");
            }
            if (!running.tryAcquire()) {
                return RuleProblems.answer(instance, HttpStatus.TOO_MANY_REQUESTS, "replay_busy", null,
                        "At most " + settings.getMaxConcurrent() + " what-if replay(s) run at once on this instance; "
                        + "try again when the one running has answered.");
            }
            try {
                WhatIfEvents.Recorded recorded = events.read(from, to, settings.getMaxEvents(),
                        settings.getTimeout());
                recorded.events().forEach(replay::replay);
                return answer(id, from, to, traffic, recorded.malformed(), replay.report(TOP_CLIENTS));
            }
            catch (WhatIfEvents.TooMany ex) {
                return RuleProblems.answer(instance, HttpStatus.BAD_REQUEST, "range_too_large", "from",
                        ex.getMessage());
            }
            catch (WhatIfEvents.Unavailable ex) {
                return RuleProblems.answer(instance, HttpStatus.SERVICE_UNAVAILABLE, "events_unavailable", null,
                        "The decision events could not be read: " + ex.getMessage());
            }
            finally {
                running.release();
            }
        });
    }

    /** How many clients the report names as the most refused. */
    static final int TOP_CLIENTS = 20;

    /** {@code "traffic"}: every arrival (the default), or only what the rules in force admitted, as shadow mode sees. */
    private static WhatIfReplay.Traffic traffic(JsonNode request) {
        JsonNode value = request.get("traffic");
        if (value == null || value.isNull()) {
            return WhatIfReplay.Traffic.ARRIVALS;
        }
        for (WhatIfReplay.Traffic traffic : WhatIfReplay.Traffic.values()) {
            if (value.isString() && traffic.name().equalsIgnoreCase(value.stringValue())) {
                return traffic;
            }
        }
        throw refusal(HttpStatus.BAD_REQUEST, "invalid_traffic", "traffic", "\"traffic\" is \"arrivals\" (every "
                + "request that came, the default) or \"admitted\" (only what the rules in force let through, as "
                + "shadow mode sees), not " + value + ".");
    }

    private WhatIfReplay replay(String id, JsonNode request, WhatIfReplay.Traffic traffic) {
        JsonNode document = request.get("rule");
        if (document == null || document.isNull()) {
            throw refusal(HttpStatus.BAD_REQUEST, "malformed_document", "rule",
                    "A what-if request holds the proposed rule under \"rule\", as PUT takes it.");
        }
        RuleDocumentReader.Read read = RuleDocumentReader.read(id, document, "rule");
        try {
            Rule rule = admin.proposed(id, read.settings());
            return new WhatIfReplay(rule, keyring, traffic);
        }
        catch (InvalidLimitException ex) {
            String field = RuleDocument.field(id, ex.setting(), document);
            String message = ex.getMessage();
            if (field != null && ex.setting() != null) {
                message = message.replace(ex.setting(), field);
            }
            throw refusal("id".equals(ex.setting()) ? HttpStatus.BAD_REQUEST : HttpStatus.UNPROCESSABLE_CONTENT,
                    "invalid_rule", field == null ? null : "rule." + field, message);
        }
    }

    private void checkRange(Instant from, Instant to) {
        if (!to.isAfter(from)) {
            throw refusal(HttpStatus.BAD_REQUEST, "invalid_range", "to", "\"to\" (" + to + ") must come after \"from\" ("
                    + from + ").");
        }
        Duration range = Duration.between(from, to);
        if (range.compareTo(settings.getMaxRange()) > 0) {
            throw refusal(HttpStatus.BAD_REQUEST, "range_too_large", "from", "The range covers " + range
                    + "; a replay covers at most " + settings.getMaxRange() + " (ratelimit.rules-api.what-if"
                    + ".max-range).");
        }
    }

    private static Instant instant(JsonNode request, String field) {
        JsonNode value = request.isObject() ? request.get(field) : null;
        if (value == null || !value.isString()) {
            throw refusal(HttpStatus.BAD_REQUEST, "invalid_range", field, "\"" + field + "\" is required: an "
                    + "ISO-8601 instant such as 2026-12-01T10:00:00Z.");
        }
        try {
            return Instant.parse(value.stringValue());
        }
        catch (DateTimeException ex) {
            throw refusal(HttpStatus.BAD_REQUEST, "invalid_range", field, "\"" + field + "\" is '"
                    + value.stringValue() + "', which is no ISO-8601 instant (2026-12-01T10:00:00Z).");
        }
    }

    private static RuleApiRefusal refusal(HttpStatus status, String error, @Nullable String field, String message) {
        return new RuleApiRefusal(status, error, field, message);
    }

    private RulesApiOperations.Answer answer(String id, Instant from, Instant to, WhatIfReplay.Traffic traffic,
            long malformed, WhatIfReport report) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("rule", id);
        body.put("from", from.toString());
        body.put("to", to.toString());
        body.put("traffic", traffic.name().toLowerCase(java.util.Locale.ROOT));
        body.put("malformed", malformed);
        body.putAll(report.members(settings.getMaxRows()));
        HttpHeaders headers = new HttpHeaders();
        headers.setContentType(MediaType.APPLICATION_JSON);
        headers.set(HttpHeaders.CACHE_CONTROL, "no-store");
        return new RulesApiOperations.Answer(HttpStatus.OK, headers, body);
    }
}
