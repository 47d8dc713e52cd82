package dev.ratelimiter.gateway;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.FallbackCharges;
import dev.ratelimiter.core.ResponseCharge;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.Verdict;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

/**
 * Charges the rules that are {@linkplain ResponseCharge charged from the response} with what the upstream reported,
 * once the response has completed: the minimum was spent when the request was admitted, the rest is charged to the
 * same buckets through the store's after-the-fact charge ({@link FallbackCharges}: a token bucket down to one capacity
 * of debt, a sliding window up to one limit more), off the request's path — the response is never held for it.
 *
 * <p>Nothing more is charged for a response that reports nothing (no header, no field), answers an error status, or
 * whose client went away (or which failed) before the amount went by: each is told to the {@link Listener} (a meter,
 * a log line). A client gone after the amount went by (a header, or a field before the body's end) is charged it.
 */
public final class ResponseCharges {

    /** Charges nothing and forgets every response: a store of this instance's memory alone. */
    public static final ResponseCharges NONE = new ResponseCharges(FallbackCharges.NONE, Listener.NONE);

    private static final Logger logger = LoggerFactory.getLogger(ResponseCharges.class);

    /** How a response charged from ended. */
    public enum Outcome {
        /** The reported amount was charged (less the minimum spent up front). */
        CHARGED,
        /** The response carried no amount (no header, no field, not a number): only the minimum was charged. */
        NOT_REPORTED,
        /** The upstream answered an error status: only the minimum was charged. */
        ERROR_STATUS,
        /**
         * The client went away, or the response failed, before it ended and before the amount went by: only the
         * minimum was charged.
         */
        CANCELLED,
        /** The store could not take the charge (Redis down): it is lost, the bucket keeps only the minimum. */
        STORE_FAILED;

        /** The tag value meters carry. */
        public String label() {
            return name().toLowerCase().replace('_', '-');
        }
    }

    /** Told how each charged rule's response ended. */
    @FunctionalInterface
    public interface Listener {

        Listener NONE = (rule, outcome, tokens) -> { };

        /** @param tokens the amount charged after the fact (0 unless {@link Outcome#CHARGED} or STORE_FAILED) */
        void onResponseCharge(String rule, Outcome outcome, double tokens);
    }

    private final FallbackCharges store;
    private final Listener listener;
    private final ThrottledLog lost = new ThrottledLog(logger);

    public ResponseCharges(FallbackCharges store, Listener listener) {
        this.store = store;
        this.listener = listener;
    }

    /** Charged to {@code store}, each outcome told to every listener in turn. */
    public static ResponseCharges of(FallbackCharges store, List<Listener> listeners) {
        List<Listener> all = List.copyOf(listeners);
        return new ResponseCharges(store, (rule, outcome, tokens) -> all.forEach(
                listener -> listener.onResponseCharge(rule, outcome, tokens)));
    }

    /** What an admitted request owes once its response completes; null when none of its rules is charged so. */
    public Pending pending(Verdict verdict) {
        if (!verdict.allowed()) {
            return null;
        }
        List<RuleOutcome> charged = null;
        for (RuleOutcome outcome : verdict.outcomes()) {
            if (outcome.allowed() && outcome.rule().responseCharge() != null) {
                if (charged == null) {
                    charged = new ArrayList<>(1);
                }
                charged.add(outcome);
            }
        }
        return charged == null ? null : new Pending(charged);
    }

    /** The response of one request: its body read as it passes, then charged once. */
    public final class Pending {

        private final List<RuleOutcome> outcomes;
        /** One scanner per distinct JSON path, made when the response's headers are known. */
        private Map<List<String>, JsonFieldScanner> scanners;
        private boolean done;

        Pending(List<RuleOutcome> outcomes) {
            this.outcomes = outcomes;
        }

        /**
         * Whether an amount is read from the body (a JSON field): the request must then ask the upstream for an
         * unencoded answer ({@code Accept-Encoding: identity}), or a client sending {@code Accept-Encoding: gzip}
         * would have the scanner read compressed bytes, find nothing, and pay the minimum.
         */
        public boolean readsBody() {
            return outcomes.stream().anyMatch(outcome -> outcome.rule().responseCharge().jsonField() != null);
        }

        /** Before the body: whether it is an event stream decides how the scanners read it. */
        public void headers(HttpHeaders headers) {
            if (scanners != null) {
                return;
            }
            MediaType type = headers.getContentType();
            boolean events = type != null && MediaType.TEXT_EVENT_STREAM.isCompatibleWith(type);
            scanners = new LinkedHashMap<>();
            for (RuleOutcome outcome : outcomes) {
                ResponseCharge charge = outcome.rule().responseCharge();
                if (charge.jsonField() != null) {
                    scanners.computeIfAbsent(charge.path(), path -> new JsonFieldScanner(path, events));
                }
            }
        }

        /** A chunk of the body as it passes; its position is left as it was. */
        public void read(ByteBuffer chunk) {
            if (scanners == null || scanners.isEmpty()) {
                return;
            }
            ByteBuffer bytes = chunk.duplicate();
            while (bytes.hasRemaining()) {
                byte b = bytes.get();
                for (JsonFieldScanner scanner : scanners.values()) {
                    scanner.feed(b);
                }
            }
        }

        /**
         * The response ended: charges what it reported, once.
         *
         * @param completed whether the body was written to its end (false: cancelled or failed)
         * @param status the response status, or 0 if unknown
         * @param headers the response headers
         */
        public void complete(boolean completed, int status, HttpHeaders headers) {
            if (done) {
                return;
            }
            done = true;
            List<FallbackCharges.Charge> charges = new ArrayList<>(outcomes.size());
            for (RuleOutcome outcome : outcomes) {
                ResponseCharge charge = outcome.rule().responseCharge();
                String rule = outcome.rule().id();
                if (status >= 400) {
                    listener.onResponseCharge(rule, Outcome.ERROR_STATUS, 0);
                    continue;
                }
                // a client gone after the amount went by (a header, a field before the end) still owes it
                Long reported = reported(charge, headers);
                if (reported == null) {
                    listener.onResponseCharge(rule, completed ? Outcome.NOT_REPORTED : Outcome.CANCELLED, 0);
                    continue;
                }
                double more = Math.max(0, (double) reported - charge.minimum());
                if (more > 0) {
                    charges.add(new FallbackCharges.Charge(outcome.check(), more));
                }
                else {
                    listener.onResponseCharge(rule, Outcome.CHARGED, 0);
                }
            }
            if (!charges.isEmpty()) {
                send(charges);
            }
        }

        private Long reported(ResponseCharge charge, HttpHeaders headers) {
            if (charge.header() != null) {
                Number number = CostExpressions.number(headers.getFirst(charge.header()));
                double value = number == null ? -1 : number.doubleValue();
                return value >= 0 && !Double.isNaN(value) ? (long) Math.min(Long.MAX_VALUE, Math.ceil(value)) : null;
            }
            JsonFieldScanner scanner = scanners == null ? null : scanners.get(charge.path());
            return scanner == null ? null : scanner.found();
        }
    }

    private void send(List<FallbackCharges.Charge> charges) {
        Runnable charged = () -> charges.forEach(
                charge -> listener.onResponseCharge(charge.check().rule().id(), Outcome.CHARGED, charge.tokens()));
        try {
            store.charge(charges).subscribe(null, failure -> {
                lost.warn("Could not charge {} rule(s) what their response reported ({}): the charge is lost, the "
                        + "bucket keeps the minimum spent up front", charges.size(), failure.toString());
                charges.forEach(charge -> listener.onResponseCharge(charge.check().rule().id(), Outcome.STORE_FAILED,
                        charge.tokens()));
            }, charged);
        }
        catch (RuntimeException ex) {
            lost.warn("Could not charge {} rule(s) what their response reported ({})", charges.size(), ex.toString());
            charges.forEach(charge -> listener.onResponseCharge(charge.check().rule().id(), Outcome.STORE_FAILED,
                    charge.tokens()));
        }
    }
}
