--- Result caching of the 2026-07-28 protocol (SEP-2549): server/discover, the lists and
--- resources/read results carry `ttlMs` (and `cacheScope`); a client may serve its copy while it
--- is fresh. One cache per client (so per server and per authorization context); entries are
--- keyed by method and the params that change the result (cursor, uri). A list_changed or
--- resources/updated notification drops the matching entries at once.
local core = require("mcp.core")

local M = {}

--- The methods whose results may be cached.
M.CACHEABLE = {
  ["server/discover"] = true, ["tools/list"] = true, ["prompts/list"] = true, ["resources/list"] = true,
  ["resources/templates/list"] = true, ["resources/read"] = true,
}

-- What each notification makes stale.
local INVALIDATES = {
  ["notifications/tools/list_changed"] = { "tools/list" },
  ["notifications/prompts/list_changed"] = { "prompts/list" },
  ["notifications/resources/list_changed"] = { "resources/list", "resources/templates/list" },
}

local function key(method, params)
  local cursor = type(params) == "table" and params.cursor or nil
  local uri = type(params) == "table" and params.uri or nil
  return method .. "\0" .. (type(cursor) == "string" and cursor or "") .. "\0" .. (type(uri) == "string" and uri or "")
end

---@class mcp.Cache
local Cache = {}
Cache.__index = Cache

--- A new, empty cache.
---@return mcp.Cache
function M.new()
  return setmetatable({ entries = {} }, Cache)
end

--- The fresh cached result of this request, or nil.
---@param method string
---@param params table|nil
---@return table|nil
function Cache:get(method, params)
  if not M.CACHEABLE[method] then return nil end
  local k = key(method, params)
  local e = self.entries[k]
  if e == nil then return nil end
  if core.now_ms() < e.expires then return e.result end
  self.entries[k] = nil
  return nil
end

--- Keep a complete result for its ttlMs (nothing when ttlMs is absent, not a number, or <= 0).
---@param method string
---@param params table|nil
---@param result table
function Cache:put(method, params, result)
  if not M.CACHEABLE[method] or type(result) ~= "table" then return end
  local ttl = result.ttlMs
  if type(ttl) ~= "number" or ttl ~= ttl or ttl <= 0 then return end
  self.entries[key(method, params)] = { method = method, uri = type(params) == "table" and params.uri or nil,
    result = result, expires = core.now_ms() + ttl }
end

--- Drop every entry of a method (all its pages).
---@param method string
function Cache:drop_method(method)
  for k, e in pairs(self.entries) do
    if e.method == method then self.entries[k] = nil end
  end
end

--- A notification arrived: drop what it makes stale (a list_changed drops the list's pages; a
--- resources/updated drops the reads of its uri and of the resources it lies under or above).
---@param method string
---@param params table
function Cache:on_notification(method, params)
  local methods = INVALIDATES[method]
  if methods then
    for _, m in ipairs(methods) do self:drop_method(m) end
  elseif method == "notifications/resources/updated" then
    local uri = type(params) == "table" and params.uri
    for k, e in pairs(self.entries) do
      -- the updated uri may be a sub-resource of what was read (or the other way round)
      if e.method == "resources/read" and (type(uri) ~= "string" or type(e.uri) ~= "string"
          or uri:sub(1, #e.uri) == e.uri or e.uri:sub(1, #uri) == uri) then
        self.entries[k] = nil
      end
    end
  end
end

--- Forget everything.
function Cache:clear()
  self.entries = {}
end

return M
