package dev.ratelimiter.redis;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimiter.core.CalendarPeriods;
import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.TokenBucketLimit;

/**
 * Where a calendar quota's count lives in Redis: one hash per client and period, {@code <bucket>:<first day of the
 * period>} (e.g. {@code rl:{3q2-7wEX4t6Yk0cQv1mT9w}:monthly@qm15@Europe.Berlin:2026-03-15}), field {@code c} = the
 * requests (tokens) counted in that period. Its TTL ends at the period's end (plus the slack), so a new period is a
 * new key and an old one goes away by itself. Reading a client's usage is {@code HGET <key> c} (absent: 0).
 *
 * <p>Lua has no time zones: the gateway computes the period from the store's clock as this JVM last saw it
 * ({@link StoreClock}) and sends its bounds with the call ({@code "<start us>:<end us>"}); the script decides only when
 * its own {@code TIME} lies within them (see {@code rate_limit.lua}).
 */
final class QuotaPeriodKeys {

    /** The quota a limit is, or null: how the store tells a calendar quota apart without testing types. */
    private static final Limit.Cases<CalendarQuotaLimit> QUOTA = new Limit.Cases<>() {

        @Override
        public CalendarQuotaLimit tokenBucket(TokenBucketLimit limit) {
            return null;
        }

        @Override
        public CalendarQuotaLimit slidingWindow(SlidingWindowLimit limit) {
            return null;
        }

        @Override
        public CalendarQuotaLimit concurrency(ConcurrencyLimit limit) {
            return null;
        }

        @Override
        public CalendarQuotaLimit calendarQuota(CalendarQuotaLimit limit) {
            return limit;
        }
    };

    /** The span each quota was last asked about: computing a period in a zone costs more than a comparison. */
    private final Map<CalendarQuotaLimit, Period> latest = new ConcurrentHashMap<>();

    /**
     * One period of one quota as the store is told about it.
     *
     * @param suffix what follows the bucket's key name ({@code :2026-03-15})
     * @param bounds the script argument {@code "<start us>:<end us>"}
     */
    record Period(long startMicros, long endMicros, String suffix, String bounds) {

        boolean holds(long micros) {
            return micros >= startMicros && micros < endMicros;
        }
    }

    static CalendarQuotaLimit quotaOf(Limit limit) {
        return limit.match(QUOTA);
    }

    /** The period of {@code quota} holding the store time {@code storeMicros}. */
    Period at(CalendarQuotaLimit quota, long storeMicros) {
        Period known = latest.get(quota);
        if (known != null && known.holds(storeMicros)) {
            return known;
        }
        CalendarPeriods.Span span = quota.spanAt(Instant.ofEpochSecond(Math.floorDiv(storeMicros, 1_000_000L),
                Math.floorMod(storeMicros, 1_000_000L) * 1_000L));
        long start = micros(span.start());
        long end = micros(span.end());
        Period period = new Period(start, end, ":" + quota.periodName(span), start + ":" + end);
        if (latest.size() < 10_000) {
            latest.put(quota, period);
        }
        return period;
    }

    private static long micros(Instant instant) {
        return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1_000;
    }
}
