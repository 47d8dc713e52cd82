#!lua flags=no-writes
-- Reads buckets without spending from them: the usage API's view of what a client has left. Declared no-writes, so
-- Redis itself refuses any write from it: it never creates a key, never extends a TTL, never changes a count, and it
-- may run on a replica (EVALSHA_RO). It applies rate_limit.lua's refill arithmetic to the state rate_limit.lua writes,
-- as of the store's clock, as if a request costing nothing were decided now.
--
-- ARGV[1]          microseconds added to the store's clock: always 0 from the limiter; tests move the clock with it
-- then, for each key i (KEYS[i]), four arguments:
--      +0          kind: 't' (token bucket), 'w' (sliding window), 'c' (concurrency) or 'q' (calendar quota), as
--                  rate_limit.lua's
--      +1          token bucket: capacity          sliding window: limit per window   concurrency: max in progress
--                  calendar quota: limit per period
--      +2          token bucket: tokens per second  sliding window: window length in ms  concurrency: lease in ms
--                  calendar quota: the period the key is named for, '<start us>:<end us>' (as rate_limit.lua's)
--      +3          '1' when the key is a local-mode bucket (settle.lua's pool): the tokens held by instances as their
--                  shares ('h:<instance>' fields) are counted as left, since they are the client's to spend
--
-- Returns, for each key: stored (1 when the key holds state of its kind, else 0: the bucket reads as full), remaining
-- (whole tokens, or room under the window's estimate, or free permits), reset-after us (until whole again if nothing
-- more is spent), permits in progress (concurrency; else 0); and last the store's time as read (us).
--
-- Adding an algorithm is one more entry in PEEK, beside its branch of rate_limit.lua's decide.

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2]) + tonumber(ARGV[1])

-- A key of another type than its kind reads as absent: rate_limit.lua drops such a key and starts afresh.
local function hash_fields(key, ...)
    local state = redis.pcall('HMGET', key, ...)
    if type(state) == 'table' and state.err ~= nil then
        return nil
    end
    return state
end

-- Unspent tokens of the instances' shares of a local-mode bucket.
local function held_shares(key)
    local all = redis.pcall('HGETALL', key)
    local held = 0
    if type(all) == 'table' and all.err == nil then
        for i = 1, #all, 2 do
            if string.sub(all[i], 1, 2) == 'h:' then
                held = held + (tonumber(all[i + 1]) or 0)
            end
        end
    end
    return held
end

-- Each returns stored, remaining, reset-after us, in progress. Same arithmetic as rate_limit.lua's decide, with a
-- cost of 0 and nothing written (its repairs of a far-ahead clock are applied to the reading only).
local PEEK = {
    t = function(key, capacity, per_second, is_local)
        per_second = tonumber(per_second)
        local rate = per_second / 1000000
        local fill_us = capacity / rate
        local state = hash_fields(key, 't', 'ts', 'r')
        local tokens = state and tonumber(state[1])
        local last = state and tonumber(state[2])
        local last_rate = state and tonumber(state[3])
        if tokens == nil or last == nil then
            return 0, capacity, 0, 0
        end
        if last > now + fill_us then
            tokens = math.min(capacity, tokens)
            last = now
        elseif last_rate ~= nil and last_rate ~= per_second then
            -- Written at another rate: the time since is credited at the lower of the two, up to the old capacity, as
            -- rate_limit.lua's decide does (the grow burst).
            tokens = math.min(capacity, last_rate * capacity / per_second,
                tokens + math.max(0, now - last) * math.min(last_rate, per_second) / 1000000)
            last = math.max(now, last)
        end
        local paused_us = math.max(0, last - now)
        tokens = math.min(capacity, tokens + math.max(0, now - last) * rate)
        if is_local then
            tokens = math.min(capacity, tokens + held_shares(key))
        end
        return 1, math.floor(tokens), math.ceil((capacity - tokens) / rate) + paused_us, 0
    end,

    w = function(key, limit, window_ms)
        window_ms = tonumber(window_ms)
        local window_us = window_ms * 1000
        local index = math.floor(now / window_us)
        local elapsed = (now - index * window_us) / window_us
        local state = hash_fields(key, 'w', 'c', 'p')
        local w = state and tonumber(state[1])
        if w == nil then
            return 0, limit, 0, 0
        end
        local cur = tonumber(state[2]) or 0
        local prev = tonumber(state[3]) or 0
        if w > index then
            if w - index > 1 then
                w = index
            else
                index = w
                elapsed = 0
            end
        end
        if w == index - 1 then
            prev = cur
            cur = 0
        elseif w ~= index then
            cur = 0
            prev = 0
        end
        local estimate = prev * (1 - elapsed) + cur
        local reset_us = 0
        if cur > 0 then
            reset_us = math.floor((2 - elapsed) * window_us)
        elseif prev > 0 then
            reset_us = math.floor((1 - elapsed) * window_us)
        end
        return 1, math.floor(math.max(0, limit - estimate)), reset_us, 0
    end,

    -- The count of the period the key is named for; a period that has ended (the reader's clock a little behind the
    -- store's at a boundary) reads as whole: the next request counts in a new key.
    q = function(key, limit, bounds)
        local first, ends = string.match(bounds, '^(%d+):(%d+)$')
        first = tonumber(first)
        ends = tonumber(ends)
        if first == nil or ends == nil or ends <= first then
            error('ERR peek: a calendar quota needs its period as <start us>:<end us>')
        end
        if now >= ends then
            return 0, limit, 0, 0
        end
        local used = redis.pcall('HGET', key, 'c')
        if type(used) == 'table' then
            return 0, limit, 0, 0
        end
        used = tonumber(used)
        if used == nil then
            return 0, limit, 0, 0
        end
        return 1, math.max(0, limit - used), math.max(0, ends - now), 0
    end,

    c = function(key, max_in_progress)
        local now_ms = math.floor(now / 1000)
        -- Leases that ended are not counted (rate_limit.lua drops them before counting); none is removed here.
        local held = redis.pcall('ZCOUNT', key, '(' .. now_ms, '+inf')
        if type(held) ~= 'number' then
            return 0, max_in_progress, 0, 0
        end
        local stored = redis.call('EXISTS', key)
        return stored, math.max(0, max_in_progress - held), 0, held
    end,
}

local out = {}
for i = 1, #KEYS do
    local base = 2 + (i - 1) * 4
    local kind = ARGV[base]
    local peek = PEEK[kind]
    if peek == nil then
        return redis.error_reply('ERR peek: unknown kind ' .. tostring(kind) .. ' for key ' .. i)
    end
    -- The third argument stays a string: a calendar quota's is its period's bounds, which each kind reads itself.
    local stored, remaining, reset_us, in_progress = peek(KEYS[i], tonumber(ARGV[base + 1]), ARGV[base + 2],
        ARGV[base + 3] == '1')
    out[#out + 1] = stored
    out[#out + 1] = remaining
    out[#out + 1] = reset_us
    out[#out + 1] = in_progress
end
out[#out + 1] = now
return out
