-- The runtime rules as one consistent snapshot.
-- KEYS[1] hash of rule specs   KEYS[2] hash of switches   KEYS[3] version counter
-- Returns { version, { id, spec, id, spec, ... }, { name, value, ... }, { damaged key, what it holds, ... } }
--
-- A key of another type or a version that is not a number (a hand edit, another tool's layout) is reported, never
-- fatal: the switches must be readable whatever state the rule specs are in, and the reader keeps its last good
-- copy of what it cannot read.
local damaged = {}

local function hash(key)
    local kind = redis.call('TYPE', key).ok
    if kind == 'hash' then
        return redis.call('HGETALL', key)
    end
    if kind ~= 'none' then
        damaged[#damaged + 1] = key
        damaged[#damaged + 1] = 'a ' .. kind .. ', not a hash'
    end
    return {}
end

local version = '0'
local kind = redis.call('TYPE', KEYS[3]).ok
if kind == 'string' then
    local stored = redis.call('GET', KEYS[3])
    if string.match(stored, '^%d+$') and #stored <= 15 then
        version = stored
    else
        damaged[#damaged + 1] = KEYS[3]
        damaged[#damaged + 1] = "'" .. string.sub(stored, 1, 40) .. "', not a version number"
    end
elseif kind ~= 'none' then
    damaged[#damaged + 1] = KEYS[3]
    damaged[#damaged + 1] = 'a ' .. kind .. ', not a version number'
end
return { version, hash(KEYS[1]), hash(KEYS[2]), damaged }
