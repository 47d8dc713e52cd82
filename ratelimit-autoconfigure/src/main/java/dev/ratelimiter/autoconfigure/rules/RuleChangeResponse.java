package dev.ratelimiter.autoconfigure.rules;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.ratelimiter.core.RuleChange;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * An operator's change answered over HTTP: the status its outcome stands for, with what was written, or a problem
 * body ({@code error}, {@code field} when one is at fault, {@code reason}).
 */
public final class RuleChangeResponse {

    private RuleChangeResponse() {
    }

    public static WebEndpointResponse<Map<String, Object>> of(RuleChange change) {
        if (change.isApplied()) {
            return new WebEndpointResponse<>(change.written(), change.outcome().code());
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", change.error());
        if (change.field() != null) {
            body.put("field", change.field());
        }
        body.put("reason", change.reason());
        return new WebEndpointResponse<>(body, change.outcome().code());
    }
}
