-- One change to the runtime rules: write, bump the version and announce it, atomically.
--
-- KEYS[1] hash of rule specs (id -> spec)   KEYS[2] hash of switches   KEYS[3] version counter
-- ARGV[1] 'put-rule' | 'delete-rule' | 'put-control'   ARGV[2] rule id or switch name   ARGV[3] value
-- ARGV[4] channel to announce the new version on
-- ARGV[5] the version the change was validated against, or '-1' for any: a rule written against another version
--         than the store's is refused ('STALE <current>') and nothing changes, so that two writers validating at
--         once cannot together leave a rule set that neither validated.
-- Returns the new version.
local op = ARGV[1]
local current = tonumber(redis.call('GET', KEYS[3]) or '0')
local expected = tonumber(ARGV[5] or '-1')
if expected ~= -1 and expected ~= current then
    return redis.error_reply('STALE ' .. current)
end
if op == 'put-rule' then
    redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
elseif op == 'delete-rule' then
    redis.call('HDEL', KEYS[1], ARGV[2])
elseif op == 'put-control' then
    redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
else
    return redis.error_reply('unknown operation ' .. tostring(op))
end
local version = redis.call('INCR', KEYS[3])
redis.call('PUBLISH', ARGV[4], version)
return version
