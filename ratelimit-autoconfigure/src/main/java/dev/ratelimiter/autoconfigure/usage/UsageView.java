package dev.ratelimiter.autoconfigure.usage;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.autoconfigure.rules.RuleView;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.Usage;
import dev.ratelimiter.core.UsageQuery;
import org.jspecify.annotations.Nullable;

/**
 * A client's usage as the usage API writes it: JSON members in a fixed order, plain maps (no type of ours for
 * Jackson to reflect on). The API key is never written back: the client appears as its client id, the same as the
 * decision events show.
 */
final class UsageView {

    private UsageView() {
    }

    static Map<String, Object> of(UsageQuery query, @Nullable String clientId, Usage usage, @Nullable String region) {
        Map<String, Object> body = new LinkedHashMap<>();
        Map<String, Object> who = new LinkedHashMap<>();
        putIfPresent(who, "client", clientId);
        putIfPresent(who, "user", query.user());
        putIfPresent(who, "tenant", query.tenant());
        putIfPresent(who, "ip", query.clientIp());
        putIfPresent(who, "route", query.route());
        putIfPresent(who, "path", query.path());
        putIfPresent(who, "routeClass", query.routeClass());
        body.put("identity", who);
        body.put("tier", usage.tier());
        if (region != null) {
            body.put("region", region);
        }
        body.put("killSwitch", usage.killSwitch());
        if (usage.abuse() != null) {
            // The limits below are already lowered by it; the score says why and until when it decays.
            Map<String, Object> abuse = new LinkedHashMap<>();
            abuse.put("factor", usage.abuse().factor());
            if (usage.abuse().score() != null) {
                abuse.put("score", usage.abuse().score());
            }
            putIfPresent(abuse, "source", usage.abuse().source());
            putIfPresent(abuse, "at", usage.abuse().at() == null ? null : usage.abuse().at().toString());
            putIfPresent(abuse, "expires", usage.abuse().expires() == null ? null : usage.abuse().expires().toString());
            body.put("abuse", abuse);
        }
        List<Map<String, Object>> rules = new ArrayList<>();
        for (Usage.RuleUsage used : usage.rules()) {
            rules.add(rule(used));
        }
        body.put("rules", rules);
        List<Map<String, Object>> skipped = new ArrayList<>();
        for (Usage.Skipped skip : usage.skipped()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("id", skip.rule().id());
            entry.put("group", skip.rule().group());
            entry.put("reason", skip.reason());
            skipped.add(entry);
        }
        body.put("skipped", skipped);
        return body;
    }

    private static Map<String, Object> rule(Usage.RuleUsage used) {
        Rule rule = used.rule();
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("id", rule.id());
        entry.put("group", rule.group());
        entry.put("algorithm", RuleView.algorithmOf(rule.limit()));
        entry.put("limit", used.limit().quota());
        entry.put("window", used.limit().window().toString());
        if (rule.limit().capsInProgress()) {
            entry.put("inProgress", used.reading().inProgress());
        }
        entry.put("remaining", used.reading().remaining());
        // whole seconds, rounded up as RateLimit-Reset is: a client waiting that long finds the bucket whole
        long resetMillis = used.resetAfter().toMillis();
        entry.put("resetSeconds", (resetMillis + 999) / 1_000);
        entry.put("resetAt", used.resetAt().toString());
        entry.put("mode", used.shadow() ? "shadow" : "enforce");
        entry.put("scope", rule.scope() == Scope.GLOBAL ? "global" : "regional");
        if (rule.scope() == Scope.GLOBAL) {
            // this region's share is the limit above; the rule's own is the sum of every region's
            entry.put("ruleLimit", rule.limit().quota());
        }
        entry.put("storeMode", rule.storeMode() == StoreMode.LOCAL ? "local" : "exact");
        entry.put("approximate", used.approximate());
        entry.put("shared", used.shared());
        entry.put("stored", used.reading().stored());
        return entry;
    }

    private static void putIfPresent(Map<String, Object> map, String name, @Nullable String value) {
        if (value != null) {
            map.put(name, value);
        }
    }
}
