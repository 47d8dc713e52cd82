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
--      +0          kind: 't' (token bucket), 'w' (sliding window), 'c' (concurrency) or 'q' (calendar quota)
--      +1          token bucket: capacity          sliding window: limit per window   concurrency: max in progress
--                  calendar quota: limit per period
--      +2          token bucket: tokens per second  sliding window: window length in ms  concurrency: lease in ms
--                  calendar quota: the period's bounds, '<start us>:<end us>' (the key names the period)
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
-- Token bucket state: { t = tokens (fractional), ts = last refill (us), r = the rate (tokens per second) it was
-- written at }. TTL: time to fill + slack. A call on another rate than r credits the time since ts at the lower of
-- the two and rebases the bucket on its own rate (see 't' below): a rate change never credits time already past
-- at the new rate.
-- Sliding window state: { w = window index, c = count in window w, p = count in window w - 1 }. TTL: two windows
-- + slack. The estimate weights the previous window by the share of it still in view.
-- Calendar quota state: { c = count in the period }, one key per client and period (the gateway computes the period
-- in its time zone, which Lua cannot, from the store's clock as it last saw it, names it in the key and sends its
-- bounds). TTL: to the period's end + slack, so the key goes away at the boundary and the next period is a new key.
-- A call whose TIME lies outside the bounds it was sent (it landed just across a boundary, or the gateway's view of
-- the store's clock was off) counts into no period: the check answers allowed 0, retry-after = the store's time, and
-- reset-after -1, it refuses its whole request (nothing of it is written, as for any enforced denial, also in
-- shadow), and the gateway sends the request again for the period holding that time. A quota's refusal asks to retry
-- at the boundary: nothing comes back before it.
-- Concurrency state: a sorted set of permit ids scored by lease expiry (ms). Expired leases (permits of an instance
-- that died, or stopped renewing) are dropped before counting, and a lease ending more than one lease from now
-- (stamped on a clock ahead) is brought back to one lease. TTL: one lease + slack, renewed with the permits.
--
-- A key holding another type than its check expects (written by hand, or by an older limiter that named buckets
-- otherwise) is dropped and starts afresh, rather than failing every decision that touches it.
--
-- Cost: Redis runs a script alone, and what a script allocates its garbage collector must sweep. So a check's outcome
-- travels as values, not tables: a request of one check (the usual) builds no table of its own, one of several builds
-- one table per check, to hold its outcome until all are decided.

local slack_ms = tonumber(ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2]) + tonumber(ARGV[2])
local MAX_TTL_MS = 800 * 24 * 3600 * 1000
local stale_after = tonumber(ARGV[3])
if stale_after > 0 and now > stale_after then
    return { now }
end

-- Decides the check on KEYS[i] with its arguments from ARGV[base], writing nothing but what a key of another type
-- forces. Returns allowed, remaining, retry-after us, reset-after us, ttl (whole ms), cost, kind, shadow; then the
-- write if the request goes ahead (true and up to three values: a token bucket's t and ts, a window's w, c and p, a
-- lease's end and its permit), then the repair written in any case (true and up to three values, as the write).
-- Or nil and a message when the check's state could not be kept.
local function decide(i, base)
    local key = KEYS[i]
    local kind = ARGV[base]
    local p1 = tonumber(ARGV[base + 1])
    local p2 = tonumber(ARGV[base + 2])
    local cost = tonumber(ARGV[base + 3])
    local shadow = ARGV[base + 4] == '1'
    local allowed, remaining, retry_us, reset_us, ttl
    local write, write_a, write_b, write_c = false
    local repair, repair_a, repair_b, repair_c = false

    if kind == 'c' then
        local permit = ARGV[base + 3]
        cost = 1
        local now_ms = math.floor(now / 1000)
        local dropped = redis.pcall('ZREMRANGEBYSCORE', key, '-inf', now_ms)
        if type(dropped) == 'table' and dropped.err ~= nil then
            redis.call('DEL', key)
        end
        -- A permit whose lease ends more than one lease from now was stamped on a clock ahead of this one: brought
        -- back to one lease, or a dead instance's permit would hold its place for as long as the clock stepped back.
        local ahead = redis.call('ZRANGEBYSCORE', key, '(' .. (now_ms + p2), '+inf')
        for _, id in ipairs(ahead) do
            redis.call('ZADD', key, 'XX', now_ms + p2, id)
        end
        local in_progress = redis.call('ZCARD', key)
        if redis.call('ZSCORE', key, permit) then
            in_progress = in_progress - 1
        end
        if in_progress < p1 then
            allowed = 1
            remaining = p1 - in_progress - 1
            retry_us = 0
            write, write_a, write_b = true, now_ms + p2, permit
        else
            allowed = 0
            remaining = 0
            retry_us = 1000000
        end
        reset_us = 0
        ttl = p2 + slack_ms
    elseif kind == 'q' then
        local first, ends = string.match(ARGV[base + 2], '^(%d+):(%d+)$')
        first = tonumber(first)
        ends = tonumber(ends)
        if first == nil or ends == nil or ends <= first then
            return nil, 'ERR check ' .. i .. ' (q) needs its period as <start us>:<end us>, not '
                .. tostring(ARGV[base + 2])
        end
        if now < first or now >= ends then
            return 0, 0, now, -1, 1, cost, kind, false, false, nil, nil, nil, false, nil, nil, nil
        end
        local used = redis.pcall('HGET', key, 'c')
        if type(used) == 'table' and used.err ~= nil then
            redis.call('DEL', key)
            used = 0
        else
            used = tonumber(used) or 0
        end
        if used + cost <= p1 then
            allowed = 1
            remaining = p1 - used - cost
            retry_us = 0
            write, write_a = true, used + cost
        else
            allowed = 0
            remaining = p1 - used
            retry_us = ends - now
        end
        reset_us = ends - now
        ttl = math.ceil((ends - now) / 1000) + slack_ms
    elseif kind == 't' then
        local rate = p2 / 1000000
        local fill_us = p1 / rate
        local state = redis.pcall('HMGET', key, 't', 'ts', 'r')
        local tokens, last, last_rate
        if state.err then
            redis.call('DEL', key)
        else
            tokens = tonumber(state[1])
            last = tonumber(state[2])
            last_rate = tonumber(state[3])
        end
        if tokens == nil or last == nil then
            tokens = p1
            last = now
        elseif last > now + fill_us then
            last = now
            repair, repair_a, repair_b, repair_c = true, math.min(p1, tokens), now, p2
        elseif last_rate ~= nil and last_rate ~= p2 then
            -- The rate changed since the last write (a region's share of a global rule grew or shrank, or the rule was
            -- edited): the time since then is credited at the lower of the two rates, up to the old capacity, and the
            -- bucket is rebased to now on the new one, written even if refused. Crediting it all at the new rate would
            -- hand a region whose share grew from 5 to 90 the time since its last admission (up to 1 / old rate) at 18
            -- times the rate at once: the grow burst. The old capacity is the old rate over this fill time: exact for
            -- a share (a share keeps its limit's fill time); for an edit that changed the fill time too, the key lived
            -- at most one old fill time since its write, so at most its level then is credited twice. A state without
            -- 'r' (written before it was kept) is taken as on this rate.
            tokens = math.min(p1, last_rate * p1 / p2,
                tokens + math.max(0, now - last) * math.min(last_rate, p2) / 1000000)
            last = math.max(now, last)
            repair, repair_a, repair_b, repair_c = true, tokens, last, p2
        end
        local paused_us = math.max(0, last - now)
        tokens = math.min(p1, tokens + math.max(0, now - last) * rate)
        if tokens >= cost then
            allowed = 1
            remaining = tokens - cost
            retry_us = 0
            write, write_a, write_b, write_c = true, remaining, math.max(now, last), p2
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
        local state = redis.pcall('HMGET', key, 'w', 'c', 'p')
        local w, cur, prev = nil, 0, 0
        if state.err then
            redis.call('DEL', key)
        else
            w = tonumber(state[1])
            cur = tonumber(state[2]) or 0
            prev = tonumber(state[3]) or 0
        end
        if w ~= nil and w > index then
            if w - index > 1 then
                -- Far ahead of this clock: count on from here instead of waiting for the stored window.
                w = index
                repair, repair_a, repair_b, repair_c = true, index, cur, prev
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
            write, write_a, write_b, write_c = true, index, cur, prev
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
    return allowed, remaining, retry_us, reset_us, math.ceil(ttl), cost, kind, shadow,
        write, write_a, write_b, write_c, repair, repair_a, repair_b, repair_c
end

local out = {}
local o = 0

-- A token bucket's, a window's or a quota's state, and its lifetime.
local function write_state(key, kind, ttl, a, b, c)
    if kind == 't' then
        redis.call('HSET', key, 't', a, 'ts', b, 'r', c)
    elseif kind == 'q' then
        redis.call('HSET', key, 'c', a)
    else
        redis.call('HSET', key, 'w', a, 'c', b, 'p', c)
    end
    redis.call('PEXPIRE', key, ttl)
end

-- Writes what one decided check of a request leaves (nothing of it when an enforced check of the request refused,
-- but its repair) and adds its four numbers to the reply.
local function settle(i, enforced_denial, allowed, remaining, retry_us, reset_us, ttl, cost, kind, shadow,
        write, write_a, write_b, write_c, repair, repair_a, repair_b, repair_c)
    local key = KEYS[i]
    if enforced_denial or not write then
        if enforced_denial and allowed == 1 then
            remaining = remaining + cost
        end
        if repair then
            write_state(key, kind, ttl, repair_a, repair_b, repair_c)
        end
    elseif kind == 'c' then
        redis.call('ZADD', key, write_a, write_b)
        if redis.call('PTTL', key) < ttl then
            redis.call('PEXPIRE', key, ttl)
        end
    else
        write_state(key, kind, ttl, write_a, write_b, write_c)
    end
    out[o + 1] = allowed
    out[o + 2] = math.floor(math.max(0, remaining))
    out[o + 3] = retry_us
    out[o + 4] = reset_us
    o = o + 4
end

local key = 0
local at = 5
for r = 1, tonumber(ARGV[4]) do
    local n = tonumber(ARGV[at])
    at = at + 1
    if n == 1 then
        local allowed, detail, retry_us, reset_us, ttl, cost, kind, shadow, write, write_a, write_b, write_c,
            repair, repair_a, repair_b, repair_c = decide(key + 1, at)
        if not allowed then
            return redis.error_reply(detail)
        end
        local enforced_denial = allowed == 0 and not shadow
        o = o + 1
        out[o] = enforced_denial and 0 or 1
        settle(key + 1, enforced_denial, allowed, detail, retry_us, reset_us, ttl, cost, kind, shadow, write,
            write_a, write_b, write_c, repair, repair_a, repair_b, repair_c)
    else
        local results = {}
        local enforced_denial = false
        for c = 1, n do
            local result = { decide(key + c, at + (c - 1) * 5) }
            if not result[1] then
                return redis.error_reply(result[2])
            end
            if result[1] == 0 and not result[8] then
                enforced_denial = true
            end
            results[c] = result
        end
        o = o + 1
        out[o] = enforced_denial and 0 or 1
        for c = 1, n do
            settle(key + c, enforced_denial, unpack(results[c], 1, 16))
        end
    end
    key = key + n
    at = at + n * 5
end
out[o + 1] = now
return out
