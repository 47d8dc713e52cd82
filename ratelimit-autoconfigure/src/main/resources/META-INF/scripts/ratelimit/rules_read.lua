-- The runtime rules as one consistent snapshot.
-- KEYS[1] hash of rule specs   KEYS[2] hash of switches   KEYS[3] version counter
-- Returns { version, { id, spec, id, spec, ... }, { name, value, ... } }
local version = redis.call('GET', KEYS[3])
if not version then
    version = '0'
end
return { version, redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]) }
