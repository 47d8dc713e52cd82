package dev.ratelimiter.core;

/**
 * What happens to a request whose API key no tier and no customer override lists. Any string is a well-formed key,
 * so without a policy an attacker who sends a new key per request is a new default-tier client each time: a fresh
 * bucket (and Redis state for each of its windows) per request.
 */
public enum UnknownApiKeyPolicy {

    /** A client of the default tier like any other (the keys are checked elsewhere, or every key is welcome). */
    DEFAULT_TIER,

    /** Refused (401 by default) before any rule or store is asked. */
    REJECT,

    /**
     * Limited by one small bucket per client address ({@link RuleSet#UNKNOWN_KEYS}) and by nothing else: every
     * unknown key from one address shares it, so rotating keys buys nothing, and the state unknown keys create is
     * one short-lived bucket per address, never one per key.
     */
    PER_ADDRESS
}
