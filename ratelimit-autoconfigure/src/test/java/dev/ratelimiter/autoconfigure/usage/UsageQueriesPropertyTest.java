package dev.ratelimiter.autoconfigure.usage;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.UsageQuery;
import dev.ratelimiter.core.UsageQueryException;
import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Any query string at all is read as a usage query or refused with a {@link UsageQueryException} naming the
 * parameter at fault and never echoing the API key: never another exception (which the API would answer 500), and
 * never a query holding a value no request could carry.
 */
class UsageQueriesPropertyTest {

    private final UsageQueries queries = new UsageQueries(new ApiKeyFormat(8, 256, "[A-Za-z0-9._~+/=-]+"));

    private static Gen<String> names() {
        return Gen.oneOf(Gen.elements(new ArrayList<>(UsageQueries.PARAMETERS)), Gen.strings(Gen.unicodeChar(), 0, 12));
    }

    private static Gen<String> values() {
        return Gen.oneOf(Gen.strings("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", 0, 30),
                Gen.strings(Gen.unicodeChar(), 0, 40), Gen.strings(Gen.anyChar(), 0, 40),
                Gen.strings("k", 250, 1_200), Gen.elements("/api/x", "/../x", "relative", "AAAAAAAAAAAAAAAAAAAAAA"));
    }

    private static Gen<Map<String, List<String>>> parameters() {
        return Gen.maps(names(), values().list(0, 3), 0, 5);
    }

    @TestFactory
    Stream<DynamicTest> anyQueryIsReadOrRefusedWithTheParameterNamed() {
        return Property.forAll(parameters()).tries(2_000).check(parameters -> {
            try {
                UsageQuery query = queries.parse(parameters);
                for (String value : new String[] { query.user(), query.tenant(), query.clientIp(), query.route(),
                        query.routeClass(), query.tier(), query.ruleId() }) {
                    if (value != null) {
                        assertThat(value).hasSizeLessThanOrEqualTo(UsageQueries.MAX_VALUE_LENGTH)
                                .doesNotContain("\0", "\n", "\r");
                    }
                }
                if (query.apiKey() != null) {
                    assertThat(query.apiKey()).matches("[A-Za-z0-9._~+/=-]{8,256}");
                }
            }
            catch (UsageQueryException refused) {
                assertThat(refused.field()).isNotBlank();
                List<String> keys = parameters.getOrDefault("apiKey", List.of());
                if (!keys.isEmpty() && keys.get(0) != null && keys.get(0).length() >= 4) {
                    assertThat(refused.getMessage()).doesNotContain(keys.get(0));
                }
            }
        });
    }

    @Test
    void theOrdinaryQueriesAreRead() {
        Map<String, List<String>> parameters = new LinkedHashMap<>();
        parameters.put("apiKey", List.of("acme-live-key"));
        parameters.put("route", List.of("search"));
        parameters.put("path", List.of("/api//x"));
        UsageQuery query = queries.parse(parameters);
        assertThat(query.apiKey()).isEqualTo("acme-live-key");
        assertThat(query.route()).isEqualTo("search");
        assertThat(query.path()).isEqualTo("/api/x");
        assertThatThrownBy(() -> queries.parse(Map.of("apikey", List.of("acme-live-key"))))
                .isInstanceOf(UsageQueryException.class).hasMessageContaining("Unknown parameter 'apikey'");
    }
}
