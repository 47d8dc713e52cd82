-- One change to the runtime rules: write, bump the version and announce it, atomically.
--
-- KEYS[1] hash of rule specs (id -> spec)   KEYS[2] hash of switches   KEYS[3] version counter
-- ARGV[1] 'put-rule' | 'delete-rule' | 'put-control'   ARGV[2] rule id or switch name   ARGV[3] value
-- ARGV[4] channel to announce the new version on
-- ARGV[5] the version the change was validated against, or '-1' for any: a rule written against another version
--         than the store's is refused ('STALE <current>') and nothing changes, so that two writers validating at
--         once cannot together leave a rule set that neither validated.
-- Returns the new version.
--
-- A damaged key (another type, a version that is not a number; see rules_read.lua) never makes a write fail: the
-- kill switch must be settable whatever the store holds. The key written is replaced (its content was unreadable,
-- readers kept their last good copy) and a damaged version counts as 0, as readers read it.
local function repaired(key, kind)
    local stored = redis.call('TYPE', key).ok
    if stored ~= kind and stored ~= 'none' then
        redis.call('DEL', key)
    end
end

local op = ARGV[1]
local current = 0
if redis.call('TYPE', KEYS[3]).ok == 'string' then
    local stored = redis.call('GET', KEYS[3])
    -- At most 15 digits: Lua's numbers are doubles, exact to 2^53, and written back in full with %d.
    if string.match(stored, '^%d+$') and #stored <= 15 then
        current = tonumber(stored)
    end
end
local expected = tonumber(ARGV[5] or '-1')
if expected ~= -1 and expected ~= current then
    return redis.error_reply('STALE ' .. current)
end
if op == 'put-rule' then
    repaired(KEYS[1], 'hash')
    redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
elseif op == 'delete-rule' then
    repaired(KEYS[1], 'hash')
    redis.call('HDEL', KEYS[1], ARGV[2])
elseif op == 'put-control' then
    repaired(KEYS[2], 'hash')
    redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
else
    return redis.error_reply('unknown operation ' .. tostring(op))
end
local version = current + 1
-- Formatted as an integer: a plain number argument is written with 14 significant digits ('1e+14' and up).
redis.call('SET', KEYS[3], string.format('%d', version))
redis.call('PUBLISH', ARGV[4], string.format('%d', version))
return version
