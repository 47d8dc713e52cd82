-- Charges buckets for what an instance admitted on its own while Redis could not answer (the exact-mode fallback),
-- so that those admissions count in Redis as if it had decided them: a store flapping between answering and not
-- cannot add the fallback's admissions on top of its own.
--
-- ARGV[1]                  slack in milliseconds added to every TTL
-- then, for each key k:    kind ('t' token bucket, 'w' sliding window, 'q' calendar quota), capacity or limit per
--                          window or per period, tokens per second or window length in ms or the period's bounds
--                          ('<start us>:<end us>', the key naming the period), tokens to charge (a sliding window:
--                          to the window in progress), a sliding window's charge to the window before (0 otherwise)
--
-- Token bucket: refilled to now exactly as the rate-limit script does (same fields, same clock rules, the time since a
-- write at another rate credited at the lower of the two), then the charge
-- is taken, down to a debt of at most one capacity: a client the fallback admitted too much is refused until the
-- bucket has refilled past it, and never for longer than twice the time to fill it. Its TTL covers that refill.
-- Sliding window: each charge is added to its window's count (the window in progress, the one before), at most one
-- limit each; a charge to the window before is dropped when the window has moved on since.
-- Calendar quota: the charge (at most one limit) is added to the period's count, its TTL to the period's end; a charge
-- whose period the store's time has left is dropped (that period's count decides nothing any more).
-- A key holding another type is dropped and started afresh, as the rate-limit script does.
-- Returns how many buckets were charged.

local slack_ms = tonumber(ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local MAX_TTL_MS = 800 * 24 * 3600 * 1000

local function read_hash(key, ...)
    local state = redis.pcall('HMGET', key, ...)
    if type(state) == 'table' and state.err ~= nil then
        redis.call('DEL', key)
        return {}
    end
    return state
end

local charged = 0
for k = 1, #KEYS do
    local base = 2 + (k - 1) * 5
    local kind = ARGV[base]
    local p1 = tonumber(ARGV[base + 1])
    local p2 = tonumber(ARGV[base + 2])
    local charge = tonumber(ARGV[base + 3])
    local charge_before = tonumber(ARGV[base + 4])
    local ttl
    if kind == 't' then
        local rate = p2 / 1000000
        local fill_us = p1 / rate
        local state = read_hash(KEYS[k], 't', 'ts', 'r')
        local tokens = tonumber(state[1])
        local last = tonumber(state[2])
        local last_rate = tonumber(state[3])
        local credit_rate, cap = rate, p1
        if tokens == nil or last == nil then
            tokens = p1
            last = now
        elseif last > now + fill_us then
            last = now
        elseif last_rate ~= nil and last_rate ~= p2 then
            -- written at another rate: the time since then at the lower one, up to the old capacity, as the rate-limit
            -- script credits it
            credit_rate = math.min(last_rate, p2) / 1000000
            cap = math.min(p1, last_rate * p1 / p2)
        end
        tokens = math.min(cap, tokens + math.max(0, now - last) * credit_rate)
        tokens = math.max(-p1, tokens - charge)
        redis.call('HSET', KEYS[k], 't', tokens, 'ts', math.max(now, last), 'r', p2)
        ttl = math.ceil((p1 - tokens) / rate / 1000) + slack_ms
    elseif kind == 'w' then
        local window_us = p2 * 1000
        local index = math.floor(now / window_us)
        local state = read_hash(KEYS[k], 'w', 'c', 'p')
        local w = tonumber(state[1])
        local cur = tonumber(state[2]) or 0
        local prev = tonumber(state[3]) or 0
        if w == nil then
            w = index
            cur = 0
            prev = 0
        elseif w < index then
            if w == index - 1 then
                prev = cur
            else
                prev = 0
            end
            cur = 0
            w = index
        end
        cur = cur + math.min(charge, p1)
        if w == index then
            prev = prev + math.min(charge_before, p1)
        end
        redis.call('HSET', KEYS[k], 'w', w, 'c', cur, 'p', prev)
        ttl = 2 * p2 + slack_ms
    elseif kind == 'q' then
        local first, ends = string.match(ARGV[base + 2], '^(%d+):(%d+)$')
        first = tonumber(first)
        ends = tonumber(ends)
        if first ~= nil and ends ~= nil and now >= first and now < ends then
            local used = tonumber(read_hash(KEYS[k], 'c')[1]) or 0
            redis.call('HSET', KEYS[k], 'c', used + math.min(charge, p1))
            ttl = math.ceil((ends - now) / 1000) + slack_ms
        end
    end
    if ttl ~= nil then
        redis.call('PEXPIRE', KEYS[k], math.max(1, math.min(MAX_TTL_MS, math.ceil(ttl))))
        charged = charged + 1
    end
end
return charged
