--- What a server may ask of the client: one table keyed by method, used by both protocol eras
--- (the legacy era answers server requests with it, client.lua's _on_request; the 2026-07-28 era
--- answers the inputRequests of input_required results and of tasks with it, M.fulfil). A
--- server's `ping` is answered by the core itself (src/session.c), so it has no entry here.
local errors = require("mcp.errors")
local json = require("mcp.json")
local sched = require("mcp.sched")

local M = {}

--- method -> { enabled = fn(client) -> boolean (a handler is registered), run = fn(client, params)
--- -> result | nil, err (may yield) }.
M.SERVER_REQUESTS = {
  ["elicitation/create"] = {
    enabled = function(client) return client:_handler("elicitation") ~= nil end,
    -- Checks the params, applies the schema's defaults, validates the answer (mcp/elicitation/init.lua).
    run = function(client, params) return require("mcp.elicitation").handle(client, params) end,
  },
  ["sampling/createMessage"] = {
    enabled = function(client) return client:_handler("sampling") ~= nil end,
    run = function(client, params) return require("mcp.handlers.sampling").handle(client, params) end,
  },
  ["roots/list"] = {
    enabled = function(client) return client:_handler("roots") ~= nil or client:_roots() ~= nil end,
    run = function(client) return require("mcp.handlers.roots").handle(client) end,
  },
}

--- The handler of a server request method, when the client has one registered; else nil.
---@param client mcp.Client
---@param method string
---@return table|nil handler { run = fn(client, params) }
function M.find(client, method)
  local h = M.SERVER_REQUESTS[method]
  if h == nil or not h.enabled(client) then return nil end
  return h
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

--- Fulfil the inputRequests of an InputRequiredResult (or of a task in input_required) with the
--- client's elicitation, sampling and roots handlers, one after the other.
---@param client mcp.Client
---@param method string the request that asked for input
---@param requests any the result's inputRequests (nil: none)
---@return table|nil responses {[key] = result}, mcp.Error|nil err
function M.fulfil(client, method, requests)
  local responses = json.object()
  if requests == nil or requests == json.null then return responses end
  if type(requests) ~= "table" then
    return nil, errors.new(nil, "invalid input_required result: inputRequests must be an object", requests,
      { kind = "protocol", method = method })
  end
  for _, key in ipairs(sorted_keys(requests)) do
    local req = requests[key]
    if type(key) ~= "string" or type(req) ~= "table" or type(req.method) ~= "string" then
      return nil, errors.new(nil, "invalid input_required result: input request " .. tostring(key)
        .. " needs a method", requests, { kind = "protocol", method = method })
    end
    local h = M.find(client, req.method)
    if h == nil then
      return nil, errors.new(nil, "the server asked for " .. req.method .. " input (" .. key
        .. "), which this client has no handler for", req, { kind = "protocol", method = method })
    end
    local params = type(req.params) == "table" and req.params or {}
    local ok, result, err = sched.pcall(h.run, client, params) -- the handler may yield
    if not ok then
      return nil, errors.new(nil, "the " .. req.method .. " handler raised: " .. tostring(result), nil,
        { kind = "handler", method = method })
    end
    if result == nil then
      if not errors.is_error(err) then
        err = errors.new(nil, "the " .. req.method .. " handler failed: " .. tostring(err), nil,
          { kind = "handler", method = method })
      end
      return nil, err
    end
    responses[key] = result
  end
  return responses
end

return M
