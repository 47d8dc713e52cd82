-- Concurrency permits of one instance: give back or renew, for many buckets in one call.
--
-- KEYS[i]   a concurrency bucket (a sorted set of permit ids scored by lease expiry, ms)
-- ARGV[1]   'release' or 'renew'
-- ARGV[2]   slack in milliseconds added to the key's TTL
-- ARGV[3 + 2(i-1)]  permit id in bucket i
--      +1           renew: the lease in milliseconds
--
-- Renew only extends permits still held (ZADD XX): a permit already given back, or dropped after its lease ran out,
-- is not brought back. Returns, for each permit, 1 if it was given back or renewed, else 0 (it was not held).

local action = ARGV[1]
local slack_ms = tonumber(ARGV[2])
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local done = {}

for i = 1, #KEYS do
    local permit = ARGV[3 + (i - 1) * 2]
    if action == 'release' then
        -- pcall: a key of another type holds no permit of ours (it is the rate script's to clean up)
        local removed = redis.pcall('ZREM', KEYS[i], permit)
        done[i] = type(removed) == 'number' and removed or 0
    else
        local lease = tonumber(ARGV[4 + (i - 1) * 2])
        local renewed = redis.pcall('ZADD', KEYS[i], 'XX', 'CH', now_ms + lease, permit)
        done[i] = 0
        if type(renewed) == 'number' and redis.call('ZSCORE', KEYS[i], permit) then
            done[i] = 1
            if redis.call('PTTL', KEYS[i]) < lease + slack_ms then
                redis.call('PEXPIRE', KEYS[i], lease + slack_ms)
            end
        end
    end
end
return done
