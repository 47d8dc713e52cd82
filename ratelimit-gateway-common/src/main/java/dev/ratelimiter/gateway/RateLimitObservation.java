package dev.ratelimiter.gateway;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The limiter's observations, their names and keys: what a trace or a meter built from them shows. A value a key has
 * no answer for is {@value #NONE}, so every observation has every key.
 */
public enum RateLimitObservation implements ObservationDocumentation {

    /**
     * One request's decision, from the admission pipeline until its verdict is judged: a child of the gateway's own
     * request observation.
     */
    DECISION {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return DefaultDecisionObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return DecisionKeys.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return ClientKeys.values();
        }
    },

    /** One call to the shared store on a decision's behalf (exact mode): a child of the decision's observation. */
    STORE {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return DefaultStoreObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return StoreKeys.values();
        }
    };

    /** The value of a key the observation has no answer for. */
    public static final String NONE = "none";

    /** The decision's low-cardinality keys: each takes a few values, fixed by the configuration. */
    public enum DecisionKeys implements KeyName {
        /** allowed, refused, shadow (allowed; a shadow rule would have refused), undecided, cancelled. */
        OUTCOME("ratelimit.outcome"),
        /** The refusal's {@code error} code (rate_limited, limiter_unavailable, missing_api_key…). */
        REFUSAL("ratelimit.refusal"),
        /** The group of the rule that limited the request (the one its rate-limit fields report). */
        RULE_GROUP("ratelimit.rule.group"),
        /** The caller's tier. */
        TIER("ratelimit.tier"),
        /** The route's class (route metadata {@code ratelimit-route-class}). */
        ROUTE_CLASS("ratelimit.route.class"),
        /** exact or local: the limiting rule's store mode. */
        STORE_MODE("ratelimit.store.mode"),
        /** store, local, fallback or none: where the verdict was made. */
        SOURCE("ratelimit.source"),
        /** Why the store could not decide (timeout, breaker-open, not-connected…). */
        FALLBACK_REASON("ratelimit.fallback.reason");

        private final String name;

        DecisionKeys(String name) {
            this.name = name;
        }

        @Override
        public String asString() {
            return name;
        }
    }

    /** The decision's high-cardinality key: one value per client, for traces only. */
    public enum ClientKeys implements KeyName {
        /** The caller's client id: its API key hashed as in the bucket names, never the key. */
        CLIENT_ID("ratelimit.client.id");

        private final String name;

        ClientKeys(String name) {
            this.name = name;
        }

        @Override
        public String asString() {
            return name;
        }
    }

    /** The store call's low-cardinality keys. */
    public enum StoreKeys implements KeyName {
        /** answered, error, or cancelled (the decision stopped waiting: its timeout). */
        OUTCOME("ratelimit.store.outcome");

        private final String name;

        StoreKeys(String name) {
            this.name = name;
        }

        @Override
        public String asString() {
            return name;
        }
    }
}
