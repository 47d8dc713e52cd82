-- rate_limit.lua as it was before its cost was cut (issue 32): the reference the rewritten script must match to the
-- reply, the write and the TTL (RateLimitScriptMatchesReferenceTest). Never run by the limiter.
--
-- Every rule of one request — or of several requests, one after the other — decided atomically inside Redis: read,
-- refill, decide and write in one step.
--
-- ARGV[1]          slack in milliseconds added to every TTL
-- ARGV[2]          microseconds added to the store's clock: always 0 from the limiter; tests move the clock with it
--                  to play a failover to a server whose clock is behind
-- ARGV[3]          the store's time (us, on the clock above) after which the call is stale, 0 for never: the gateway
--                  has decided its requests without the store by then (it waits no longer), so a call Redis runs
--                  only after it (held in its input while Redis was paused or slow) decides and writes nothing —
--                  else those requests would be counted twice, once by the gateway's fallback and once here
-- ARGV[4]          the number of requests R in this call (requests that arrived together are sent in one call)
-- then, for each request r: its number of checks n, and for each of its checks i (the next key in KEYS, in order):
--      +0          kind: 't' (token bucket), 'w' (sliding window) or 'c' (concurrency)
--      +1          token bucket: capacity          sliding window: limit per window   concurrency: max in progress
--      +2          token bucket: tokens per second  sliding window: window length in ms  concurrency: lease in ms
--      +3          cost of this request in tokens; for concurrency, the id of the permit the request takes
--      +4          '1' if the check is in shadow (its denial is recorded, never enforced), else '0'
--
-- Returns, for each request in order: allowed (1/0), then for each of its checks: allowed (1/0), remaining,
-- retry-after us, reset-after us; and last the store's time as the script read it (us), from which the gateway
-- keeps track of the store's clock. A stale call returns the store's time alone.
--
-- All or nothing, per request: every check of a request is decided before anything of it is written, and when a
-- check that is not in shadow denies, nothing of that request is written, so no bucket pays for a refused request.
-- Otherwise every check that allows spends its cost. The requests of one call are decided one after the other, each
-- seeing what the earlier ones spent: exactly as if each had been its own call, on the same clock reading. Arguments
-- that could not be written (a TTL that is not a whole number of milliseconds Redis accepts) fail the script before
-- any write of the request they belong to.
--
-- The clock is the store's (TIME, to the microsecond), never a gateway's: a skewed gateway clock cannot refill its
-- own bucket, and refills are continuous (not whole seconds). Every write sets its TTL in the same script, so no
-- crash between two calls can leave a key that never expires.
--
-- The store's clock can step back (a failover to a replica whose clock is behind). A bucket's time never does: a
-- token bucket refills only for time after its last refill, and a sliding window counts in the latest window it has
-- seen until the clock reaches it again. A step back of d therefore pauses a bucket for at most d, and no interval is
-- credited twice. A step larger than the state's lifetime (a token bucket's fill time, two windows) is not waited
-- out: the bucket goes on from the new clock with what it holds, so no client is refused for longer than that; if
-- the clock later returns, that bucket can gain at most one refill of that length. That repair (the bucket's time
-- moved to the new clock, its tokens or counts unchanged) is written even when the request is refused: it spends
-- nothing, and without it the next call would find the same far-ahead time and refuse again, until the old clock.
--
-- Token bucket state: { t = tokens (fractional), ts = last refill (us) }. TTL: time to fill + slack.
-- Sliding window state: { w = window index, c = count in window w, p = count in window w - 1 }. TTL: two windows
-- + slack. The estimate weights the previous window by the share of it still in view.
-- Concurrency state: a sorted set of permit ids scored by lease expiry (ms). Expired leases (permits of an instance
-- that died, or stopped renewing) are dropped before counting, and a lease ending more than one lease from now
-- (stamped on a clock ahead) is brought back to one lease. TTL: one lease + slack, renewed with the permits.
--
-- A key holding another type than its check expects (written by hand, or by an older limiter that named buckets
-- otherwise) is dropped and starts afresh, rather than failing every decision that touches it.

local slack_ms = tonumber(ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2]) + tonumber(ARGV[2])
local MAX_TTL_MS = 800 * 24 * 3600 * 1000
local stale_after = tonumber(ARGV[3])
if stale_after > 0 and now > stale_after then
    return { now }
end

local function failed(reply)
    return type(reply) == 'table' and reply.err ~= nil
end

local function read_hash(key, ...)
    local state = redis.pcall('HMGET', key, ...)
    if failed(state) then
        redis.call('DEL', key)
        return {}
    end
    return state
end

local function decide(i, base)
    local kind = ARGV[base]
    local p1 = tonumber(ARGV[base + 1])
    local p2 = tonumber(ARGV[base + 2])
    local cost = tonumber(ARGV[base + 3])
    local shadow = ARGV[base + 4] == '1'
    local allowed, remaining, retry_us, reset_us, write, ttl, repair

    if kind == 'c' then
        local permit = ARGV[base + 3]
        cost = 1
        local now_ms = math.floor(now / 1000)
        if failed(redis.pcall('ZREMRANGEBYSCORE', KEYS[i], '-inf', now_ms)) then
            redis.call('DEL', KEYS[i])
        end
        -- A permit whose lease ends more than one lease from now was stamped on a clock ahead of this one: brought
        -- back to one lease, or a dead instance's permit would hold its place for as long as the clock stepped back.
        local ahead = redis.call('ZRANGEBYSCORE', KEYS[i], '(' .. (now_ms + p2), '+inf')
        for _, id in ipairs(ahead) do
            redis.call('ZADD', KEYS[i], 'XX', now_ms + p2, id)
        end
        local in_progress = redis.call('ZCARD', KEYS[i])
        if redis.call('ZSCORE', KEYS[i], permit) then
            in_progress = in_progress - 1
        end
        if in_progress < p1 then
            allowed = 1
            remaining = p1 - in_progress - 1
            retry_us = 0
            write = { now_ms + p2, permit }
        else
            allowed = 0
            remaining = 0
            retry_us = 1000000
        end
        reset_us = 0
        ttl = p2 + slack_ms
    elseif kind == 't' then
        local rate = p2 / 1000000
        local fill_us = p1 / rate
        local state = read_hash(KEYS[i], 't', 'ts')
        local tokens = tonumber(state[1])
        local last = tonumber(state[2])
        if tokens == nil or last == nil then
            tokens = p1
            last = now
        elseif last > now + fill_us then
            last = now
            repair = { 't', math.min(p1, tokens), 'ts', now }
        end
        local paused_us = math.max(0, last - now)
        tokens = math.min(p1, tokens + math.max(0, now - last) * rate)
        if tokens >= cost then
            allowed = 1
            remaining = tokens - cost
            retry_us = 0
            write = { 't', remaining, 'ts', math.max(now, last) }
        else
            allowed = 0
            remaining = tokens
            retry_us = math.ceil((cost - tokens) / rate) + paused_us
        end
        reset_us = math.ceil((p1 - remaining) / rate) + paused_us
        ttl = math.ceil(fill_us / 1000) + slack_ms
    else
        local window_us = p2 * 1000
        local index = math.floor(now / window_us)
        local elapsed = (now - index * window_us) / window_us
        local state = read_hash(KEYS[i], 'w', 'c', 'p')
        local w = tonumber(state[1])
        local cur = tonumber(state[2]) or 0
        local prev = tonumber(state[3]) or 0
        if w ~= nil and w > index then
            if w - index > 1 then
                -- Far ahead of this clock: count on from here instead of waiting for the stored window.
                w = index
                repair = { 'w', index, 'c', cur, 'p', prev }
            else
                -- Stepped back: still in the stored window, at its start.
                index = w
                elapsed = 0
            end
        end
        if w == nil then
            cur = 0
            prev = 0
        elseif w == index - 1 then
            prev = cur
            cur = 0
        elseif w ~= index then
            cur = 0
            prev = 0
        end
        local estimate = prev * (1 - elapsed) + cur
        if estimate + cost <= p1 then
            allowed = 1
            remaining = p1 - estimate - cost
            retry_us = 0
            cur = cur + cost
            write = { 'w', index, 'c', cur, 'p', prev }
        else
            allowed = 0
            remaining = p1 - estimate
            if cur + cost <= p1 and prev > 0 then
                retry_us = math.ceil(math.max(0, (1 - (p1 - cur - cost) / prev) - elapsed) * window_us)
            else
                local next_needed = 0
                if cur > 0 then
                    next_needed = math.max(0, 1 - (p1 - cost) / cur)
                end
                retry_us = math.ceil((1 - elapsed + next_needed) * window_us)
            end
        end
        if cur > 0 then
            reset_us = math.floor((2 - elapsed) * window_us)
        elseif prev > 0 then
            reset_us = math.floor((1 - elapsed) * window_us)
        else
            reset_us = 0
        end
        ttl = 2 * p2 + slack_ms
    end

    if not (ttl >= 1 and ttl <= MAX_TTL_MS) then
        return nil, 'ERR check ' .. i .. ' (' .. tostring(kind) .. ') would live ' .. tostring(ttl)
            .. ' ms; limits must keep their state at most 800 days'
    end
    return { allowed, remaining, retry_us, reset_us, write, math.ceil(ttl), cost, kind, shadow, repair }
end

local out = {}
local requests = tonumber(ARGV[4])
local key = 0
local at = 5
for r = 1, requests do
    local n = tonumber(ARGV[at])
    at = at + 1
    local first = key + 1
    local results = {}
    local enforced_denial = false
    for c = 1, n do
        local result, failure = decide(first + c - 1, at + (c - 1) * 5)
        if not result then
            return redis.error_reply(failure)
        end
        if result[1] == 0 and not result[9] then
            enforced_denial = true
        end
        results[c] = result
    end
    out[#out + 1] = enforced_denial and 0 or 1
    for c = 1, n do
        local i = first + c - 1
        local result = results[c]
        local remaining = result[2]
        if enforced_denial or not result[5] then
            if enforced_denial and result[1] == 1 then
                remaining = remaining + result[7]
            end
            if result[10] then
                redis.call('HSET', KEYS[i], unpack(result[10]))
                redis.call('PEXPIRE', KEYS[i], result[6])
            end
        else
            if result[8] == 'c' then
                redis.call('ZADD', KEYS[i], unpack(result[5]))
                if redis.call('PTTL', KEYS[i]) < result[6] then
                    redis.call('PEXPIRE', KEYS[i], result[6])
                end
            else
                redis.call('HSET', KEYS[i], unpack(result[5]))
                redis.call('PEXPIRE', KEYS[i], result[6])
            end
        end
        out[#out + 1] = result[1]
        out[#out + 1] = math.floor(math.max(0, remaining))
        out[#out + 1] = result[3]
        out[#out + 1] = result[4]
    end
    key = key + n
    at = at + n * 5
end
out[#out + 1] = now
return out
