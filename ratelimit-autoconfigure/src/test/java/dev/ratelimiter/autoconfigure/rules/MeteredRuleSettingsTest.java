package dev.ratelimiter.autoconfigure.rules;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.Metering;
import dev.ratelimiter.core.ResponseCharge;
import dev.ratelimiter.core.Rule;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * cost-expression and charge-from-response as the rules API and application.yml give them: accepted into the rule,
 * or refused with a message naming the setting, before anything is written.
 */
class MeteredRuleSettingsTest {

    @Test
    void aDocumentWithACostExpressionBecomesAMeteredRule() {
        Rule rule = fromDocument("{\"capacity\":100,\"refillTokens\":10,\"refillPeriod\":\"PT1S\","
                + "\"costExpression\":\"headers['X-Batch-Size']\",\"maxCost\":20,\"fallbackCost\":3}");
        assertThat(rule.metering()).isEqualTo(Metering.fromRequest("headers['X-Batch-Size']", 20, 3));
    }

    @Test
    void aDocumentChargedFromTheResponseBecomesARuleChargedSo() {
        Rule rule = fromDocument("{\"capacity\":10000,\"refillTokens\":10000,\"refillPeriod\":\"PT1M\","
                + "\"chargeFromResponse\":{\"jsonField\":\"usage.total_tokens\",\"minimum\":50}}");
        assertThat(rule.responseCharge()).isEqualTo(new ResponseCharge(null, "usage.total_tokens", 50));
        assertThat(rule.costOf(null)).isEqualTo(50);
    }

    @Test
    void theMaxCostDefaultsToTheQuota() {
        Rule rule = create(Map.of("capacity", "100", "cost-expression", "query['n']"));
        assertThat(rule.metering().maxCost()).isEqualTo(100);
        assertThat(rule.metering().fallbackCost()).isEqualTo(1);
    }

    @Test
    void aMalformedOrUnsafeExpressionIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> create(Map.of("capacity", "100", "cost-expression", "headers['n'")))
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageStartingWith("ratelimit.rules.r.cost-expression 'headers['n'' is not a valid expression")
                .extracting(ex -> ((InvalidLimitException) ex).setting())
                .isEqualTo("ratelimit.rules.r.cost-expression");
        assertThatThrownBy(() -> create(Map.of("capacity", "100", "cost-expression",
                "new java.io.File('/etc/passwd')"))).hasMessageContaining("uses a type");
    }

    @Test
    void whatCannotBeChargedFromTheResponseIsRefused() {
        assertThatThrownBy(() -> create(Map.of("algorithm", "concurrency", "max-in-progress", "5",
                "charge-from-response.header", "X-Usage"))).hasMessageContaining("caps requests in progress");
        assertThatThrownBy(() -> create(Map.of("capacity", "100", "store-mode", "local",
                "charge-from-response.header", "X-Usage"))).hasMessageContaining("use store-mode exact");
        assertThatThrownBy(() -> create(Map.of("capacity", "100", "charge-from-response.header", "X-Usage",
                "charge-from-response.json-field", "usage.total"))).hasMessageContaining("exactly one of header");
        assertThatThrownBy(() -> create(Map.of("capacity", "100", "charge-from-response.json-field", "usage..total")))
                .hasMessageContaining("empty member name");
        assertThatThrownBy(() -> create(Map.of("capacity", "100", "charge-from-response.header", "X-Usage",
                "charge-from-response.minimum", "101"))).hasMessageContaining("minimum must be between 1 and its "
                        + "quota 100");
        assertThatThrownBy(() -> create(Map.of("capacity", "100", "cost", "2", "cost-expression", "query['n']")))
                .hasMessageContaining("has a fixed cost 2 and a cost-expression");
        assertThatThrownBy(() -> create(Map.of("capacity", "100", "cost-expression", "query['n']", "max-cost",
                "500"))).hasMessageContaining("max-cost must be between 1 and its quota 100");
    }

    @Test
    void anUnknownMemberOfChargeFromResponseIsRefused() {
        assertThatThrownBy(() -> RuleDocument.settings("r", JsonMapper.builder().build().readTree(
                "{\"chargeFromResponse\":{\"jsonPath\":\"usage\"}}")))
                .hasMessageContaining("chargeFromResponse.jsonPath is not a setting of chargeFromResponse");
    }

    private static Rule fromDocument(String json) {
        Map<String, Object> settings = RuleDocument.settings("r", JsonMapper.builder().build().readTree(json));
        Map<String, String> spec = new LinkedHashMap<>();
        settings.forEach((name, value) -> {
            if (value instanceof Map<?, ?> nested) {
                nested.forEach((child, childValue) -> spec.put(name + "." + child, String.valueOf(childValue)));
            }
            else {
                spec.put(name, String.valueOf(value));
            }
        });
        return create(spec);
    }

    private static Rule create(Map<String, String> spec) {
        Map<String, String> all = new LinkedHashMap<>(spec);
        if (!spec.containsKey("algorithm") && !spec.containsKey("refillTokens")) {
            all.put("refill-tokens", "10");
        }
        return RuleFactory.create("r", RuleFactory.bindStrictly("r", all), "ratelimit.rules.r.");
    }
}
