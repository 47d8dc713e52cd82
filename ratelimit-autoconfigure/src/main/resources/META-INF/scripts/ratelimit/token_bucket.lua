-- Token bucket: read, refill, decide and write in one atomic step inside Redis.
--
-- KEYS[1]  the bucket, a hash { t = tokens (may be fractional), ts = last refill in microseconds }
-- ARGV[1]  capacity in tokens (the largest burst)
-- ARGV[2]  refill rate in tokens per second (may be fractional: 1000 per minute is 16.67/s)
-- ARGV[3]  cost of this request in tokens
-- ARGV[4]  slack in milliseconds added to the TTL beyond the time an empty bucket takes to fill
--
-- Returns { allowed (1 or 0), remaining whole tokens, retry-after in microseconds, reset-after in microseconds }
--
-- The clock is the store's (TIME, to the microsecond), never a gateway's: a skewed gateway clock cannot refill
-- its own bucket, and refills happen at sub-second granularity (not in whole seconds).
-- The TTL is set in the same script as the write, so no crash between two calls can leave a key that never expires;
-- once a bucket has been idle long enough to be full again, forgetting it changes no decision.

local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2]) / 1000000
local cost = tonumber(ARGV[3])
local slack_ms = tonumber(ARGV[4])

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])

local state = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens = tonumber(state[1])
local last = tonumber(state[2])
if tokens == nil or last == nil then
    tokens = capacity
    last = now
end
tokens = math.min(capacity, tokens + math.max(0, now - last) * rate)

local allowed = 0
local retry_us = 0
if tokens >= cost then
    tokens = tokens - cost
    allowed = 1
else
    retry_us = math.ceil((cost - tokens) / rate)
end
local reset_us = math.ceil((capacity - tokens) / rate)

redis.call('HSET', KEYS[1], 't', tokens, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate / 1000) + slack_ms)

return { allowed, math.floor(tokens), retry_us, reset_us }
