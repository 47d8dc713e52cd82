package dev.ratelimiter.scenarios;

import java.time.Duration;

/**
 * The scale of a run. The seeds' figures (10,000 clients, a quota of 100 per second, 50,000 requests a second) are
 * scaled down to fit a shared 2-core machine; the checks are ratios and bounds, so they hold at any scale.
 *
 * @param quota per-client token bucket: {@code quota} per second, bursts of up to {@code quota}
 * @param honestClients honest API keys, each far under quota
 * @param honestRate requests per second of all honest clients together
 * @param noisyFactor the noisy client sends this many times its quota
 * @param floodFactor the flood is the noisy client times this
 * @param botnetKeys keys of the botnet, each under quota, all on /login
 * @param botnetRate requests per second of the whole botnet
 * @param loginCap per-endpoint cap of /login, per second (bursts of as many)
 * @param windowLimit the window-edge client's sliding-window quota
 * @param window its window
 * @param seconds length of each scenario's load
 * @param instances gateway processes
 * @param storeTimeout {@code ratelimit.store.timeout} of our limiter in the stories (the side by side runs with the
 *        product's default, 5 ms)
 */
record Limits(int quota, int honestClients, int honestRate, int noisyFactor, int floodFactor, int botnetKeys,
        int botnetRate, int loginCap, int windowLimit, Duration window, int seconds, int instances, Duration storeTimeout) {

    /** The product's default store timeout: what the side by side compares. */
    static final Duration DEFAULT_STORE_TIMEOUT = Duration.ofMillis(5);

    Limits withStoreTimeout(Duration timeout) {
        return new Limits(quota, honestClients, honestRate, noisyFactor, floodFactor, botnetKeys, botnetRate, loginCap,
                windowLimit, window, seconds, instances, timeout);
    }

    static Limits full() {
        return new Limits(10, 2_000, 300, 20, 10, 2_000, 400, 50, 40, Duration.ofSeconds(4), 20, 2, Duration.ofMillis(100));
    }

    static Limits smoke() {
        return new Limits(10, 200, 100, 20, 3, 500, 150, 30, 20, Duration.ofSeconds(4), 3, 2,
                Duration.ofMillis(100));
    }
}
