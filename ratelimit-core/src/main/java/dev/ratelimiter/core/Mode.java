package dev.ratelimiter.core;

/** Whether a rule's denials are enforced. */
public enum Mode {
    /** Denials are answered with 429. */
    ENFORCE,
    /** The rule is evaluated and its would-be denials recorded, but it never denies. */
    SHADOW
}
