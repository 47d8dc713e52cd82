package dev.ratelimiter.scenarios;

import dev.ratelimiter.scenarios.Gateways.Mode;

/** The same honest + noisy load through one limiter, normal, with Redis paused and with Redis killed. */
record SideBySide(Mode mode, double startupSeconds, double offered, double answeredRate, double maxRate,
        double p50, double p99, double honestErrors, double noisyAdmittedRate, double roundTripsPerRequest,
        double commandsPerRequest,
        double pausedP99, double pausedErrors, double pausedNoisyRate, double killedP99, double killedErrors,
        double killedNoisyRate, String honestErrorsSeen) {

    SideBySide withMaxRate(double rate) {
        return new SideBySide(mode, startupSeconds, offered, answeredRate, rate, p50, p99, honestErrors,
                noisyAdmittedRate, roundTripsPerRequest, commandsPerRequest, pausedP99, pausedErrors,
                pausedNoisyRate, killedP99, killedErrors, killedNoisyRate, honestErrorsSeen);
    }
}
