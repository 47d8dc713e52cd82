-- One instance's heartbeat, and the count of instances alive.
-- KEYS[1] sorted set of instance ids scored by their last heartbeat (ms of the Redis clock)
-- ARGV[1] this instance's id   ARGV[2] how long a heartbeat counts (ms)   ARGV[3] '1' to leave (shutdown)
-- Returns the number of instances whose last heartbeat is recent enough.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[2])
if ARGV[3] == '1' then
    redis.call('ZREM', KEYS[1], ARGV[1])
else
    redis.call('ZADD', KEYS[1], now, ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return redis.call('ZCARD', KEYS[1])
