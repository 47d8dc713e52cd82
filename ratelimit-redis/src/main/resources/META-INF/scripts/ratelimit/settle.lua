-- Local mode: one instance settles all the buckets it holds or touched, in one call.
--
-- Each bucket hash holds the store's pool { t = tokens, ts = last refill (us) } and, per instance i,
-- { d:i = requests it saw in its last interval, h:i = unspent tokens of its share, at:i = when it last settled (us) }.
-- Shares are taken from the pool when granted, so pool + all shares never exceed the capacity: a client never gets
-- more than its quota, however its traffic is spread.
--
-- ARGV[1] instance id   ARGV[2] microseconds after which a silent instance is dead (its share returns to the pool)
-- ARGV[3] TTL slack (ms)
-- ARGV[4 + 9(k-1)...] for bucket k: capacity, tokens per second, demand, held, returned, provisional spend, need,
--   want, silence (us)
--   (need: the largest cost of one request this instance saw; a share smaller than that can serve none of them)
--   (want: what this instance expects to spend in its silence; silence: how long it may go without settling this
--   bucket when the store lets it, see below)
-- Returns, for each bucket: grant, give-back, pool left (whole tokens), silent (1 when this instance may stay silent
-- about the bucket for its silence).
--
-- Silence: an instance alone on a bucket (no other live instance holds a share or saw demand), in use, whose client
-- is far from its limit (it wants at most half the bucket in a silence) is granted at most half the bucket — bursts up
-- to that are served from its share, the rest stays in the pool, where an instance the traffic moves to (or that
-- outlives it) finds it while this one is silent — and may stay silent. Its at:i is stamped at the end of its silence,
-- so others count it dead only a stale period after that; the bucket lives that much longer. A client near its quota,
-- or an instance holding nothing, is not let go silent.
--
-- The pool's clock never runs backwards: after a failover to a server whose clock is behind, refills pause until
-- the clock has caught up with the last settle instead of crediting the same interval twice.

local me = ARGV[1]
local stale_us = tonumber(ARGV[2])
local slack_ms = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local out = {}

for k = 1, #KEYS do
    local base = 4 + (k - 1) * 9
    local capacity = tonumber(ARGV[base])
    local rate = tonumber(ARGV[base + 1]) / 1000000
    local demand = tonumber(ARGV[base + 2])
    local held = tonumber(ARGV[base + 3])
    local returned = tonumber(ARGV[base + 4])
    local provisional = tonumber(ARGV[base + 5])
    local need = tonumber(ARGV[base + 6])
    local want = tonumber(ARGV[base + 7])
    local silence = tonumber(ARGV[base + 8])

    local fields = redis.pcall('HGETALL', KEYS[k])
    if type(fields) == 'table' and fields.err then
        -- not a settled bucket (another type, written by hand): start it afresh
        redis.call('DEL', KEYS[k])
        fields = {}
    end
    local state = {}
    for i = 1, #fields, 2 do
        state[fields[i]] = fields[i + 1]
    end

    -- Other instances: drop the dead (their shares go back to the pool), add up the live ones' demand and shares.
    local pool = tonumber(state['t'])
    local last = tonumber(state['ts'])
    if pool == nil or last == nil then
        pool = capacity
        last = now
    end
    local others_held = 0
    local total_demand = demand
    local latest_at = now
    for name, value in pairs(state) do
        if string.sub(name, 1, 3) == 'at:' then
            local id = string.sub(name, 4)
            if id ~= me then
                local other_held = tonumber(state['h:' .. id]) or 0
                if now - tonumber(value) > stale_us then
                    pool = pool + other_held
                    redis.call('HDEL', KEYS[k], 'at:' .. id, 'h:' .. id, 'd:' .. id)
                else
                    others_held = others_held + other_held
                    total_demand = total_demand + (tonumber(state['d:' .. id]) or 0)
                    latest_at = math.max(latest_at, tonumber(value))
                end
            end
        end
    end

    -- Refill, never past the capacity counting every share out there; take back returns, charge provisional spend.
    pool = pool + returned - provisional
    pool = math.min(capacity - others_held - held, pool + math.max(0, now - last) * rate)
    local stamp = math.max(now, last)

    local alone = others_held == 0 and total_demand == demand
    local half = math.floor(capacity / 2)
    local may_silence = alone and demand > 0 and want <= half
    local grant = 0
    local give_back = 0
    if demand > 0 and total_demand > 0 then
        local target = math.floor((math.max(0, pool) + others_held + held) * demand / total_demand)
        if may_silence and target > half then
            target = half
        end
        if target < need then
            -- A fair part too small for one request serves nobody: ask for one request's worth.
            target = need
        end
        if target > held then
            grant = math.min(target - held, math.max(0, math.floor(pool)))
        elseif held > target then
            give_back = math.floor(held - target)
        end
        if held + grant < need then
            -- Still short of one request: keep nothing, so that the tokens can gather where a request can pass.
            grant = 0
            give_back = math.floor(held)
        end
    end
    pool = pool - grant

    local kept = held + grant - give_back
    if not (may_silence and kept > 0 and kept <= half) then
        silence = 0
    end
    redis.call('HSET', KEYS[k], 't', pool, 'ts', stamp, 'd:' .. me, demand, 'h:' .. me, held + grant, 'at:' .. me,
        now + silence)
    -- Long enough for the bucket to refill, and for every instance it counts alive (a silent one until its silence
    -- ends) to be counted dead: an expired hash would forget the shares they hold.
    latest_at = math.max(latest_at, now + silence)
    redis.call('PEXPIRE', KEYS[k], math.ceil(capacity / rate / 1000) + slack_ms
        + math.ceil((latest_at - now + stale_us) / 1000))
    out[#out + 1] = grant
    out[#out + 1] = give_back
    out[#out + 1] = math.floor(math.max(0, pool))
    out[#out + 1] = silence > 0 and 1 or 0
end
return out
