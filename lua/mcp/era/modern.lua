--- The 2026-07-28 era: one object per connection (and per server/discover probe), made by
--- Client:connect. It owns the era's state (the protocol version, the log level set_logging_level
--- asked for, the tools' x-mcp-header bindings, the ttlMs cache, the subscriptions/listen
--- request) and implements the era interface (lua/mcp/era/init.lua) with the wire rules of
--- lua/mcp/modern.lua. It reaches the client only through the client's internal interface
--- (docs/ARCHITECTURE.md, The protocol eras).
local cache = require("mcp.cache")
local errors = require("mcp.errors")
local handlers = require("mcp.handlers")
local json = require("mcp.json")
local listen = require("mcp.listen")
local modern = require("mcp.modern")
local tasks = require("mcp.tasks")

local M = {}

---@class mcp.ModernEra
local Era = {}
Era.__index = Era

--- A modern era object.
---@param client mcp.Client
---@param o table version (the protocol version), tool_headers (the transport takes the protocol's
--- HTTP headers), client_info ({name=, version=}), max_input_rounds
---@return mcp.ModernEra
function M.new(client, o)
  local self = setmetatable({
    name = "modern",
    client = client,
    version = o.version,
    tool_headers = o.tool_headers == true,
    client_info = o.client_info,
    max_input_rounds = o.max_input_rounds,
    log_level = nil, -- set_logging_level's level, sent in every request's _meta
    tool_bindings = {}, -- tool name -> x-mcp-header bindings (HTTP)
    cache = cache.new(), -- ttlMs caching of results
  }, Era)
  self.listen = listen.new(self, client)
  return self
end

-- ---- what the requests carry ---------------------------------------------------------------

--- The ClientCapabilities declared in every request's _meta: roots without listChanged (no
--- roots/list_changed in 2026-07-28), and the tasks extension (tool calls may become tasks).
---@return table
function Era:capabilities()
  return self.client:_advertised_capabilities(json.object(), { tasks.EXTENSION })
end

--- params with the era's _meta (protocol version, capabilities, client info, log level).
---@param params table|nil
---@return table
function Era:with_meta(params)
  return modern.with_meta(params, self.version, self:capabilities(), self.client_info, self.log_level)
end

--- The protocol's HTTP headers of a request (Mcp-Method, Mcp-Name, Mcp-Param-*) on a transport
--- that takes them; nil elsewhere.
---@param method string
---@param params table|nil
---@return table|nil headers, mcp.Error|nil err
function Era:protocol_headers(method, params)
  if not self.tool_headers then return nil end
  return modern.request_headers(self.tool_bindings, method, params)
end

-- ---- requests ----------------------------------------------------------------------------------

-- A result the server answered with resultType "task": followed for tools/call, passed on for
-- tasks/get, an error elsewhere.
local function task_result(self, method, res, opts)
  if method == "tools/call" then return tasks.await(self.client, method, res, opts) end
  if method == "tasks/get" then return res end
  return nil, errors.new(nil, "the server answered " .. method .. " with a task, where the protocol allows none",
    res, { kind = "protocol", method = method })
end

--- A request: _meta on every round, the HTTP headers, resultType read on every result, and
--- input_required answered through the handlers and sent again (SEP-2322); complete results
--- served from and kept in the ttlMs cache.
---@param method string
---@param params table|nil
---@param opts table the checked per-call options
---@return any result, mcp.Error|nil err
function Era:request(method, params, opts)
  if opts.cache ~= false then
    local hit = self.cache:get(method, params)
    if hit ~= nil then return hit end
  end
  local caps = self:capabilities()
  local send = params
  local rounds = 0
  while true do
    local hdrs
    if self.tool_headers then
      local herr
      hdrs, herr = modern.request_headers(self.tool_bindings, method, send)
      if not hdrs then return nil, herr end
    end
    local res, err = self.client:_roundtrip(method,
      modern.with_meta(send, self.version, caps, self.client_info, self.log_level), opts, hdrs)
    if res == nil then
      -- an invalid cursor: every cached page of that list is suspect
      if err.code == errors.ERROR_CODES.INVALID_PARAMS and type(params) == "table" and params.cursor ~= nil then
        self.cache:drop_method(method)
      end
      return nil, err
    end
    local rt
    rt, err = modern.result_type(method, res)
    if rt == nil then return nil, err end
    if rt == "complete" then
      -- the result of an input round is never cached (SEP-2322)
      if rounds == 0 then self.cache:put(method, params, res) end
      return res
    end
    if rt == "task" then return task_result(self, method, res, opts) end
    if not modern.INPUT_METHODS[method] then
      return nil, errors.new(nil, "the server asked for input on " .. method .. ", where the protocol allows none",
        res, { kind = "protocol", method = method })
    end
    rounds = rounds + 1
    if rounds > self.max_input_rounds then
      return nil, errors.new(nil, ("the server still asked for input after %d rounds"):format(rounds - 1), res,
        { kind = "protocol", method = method })
    end
    local responses
    responses, err = handlers.fulfil(self.client, method, res.inputRequests)
    if responses == nil then return nil, err end
    send = modern.retry_params(params, responses, res)
  end
end

--- 2026-07-28 has no ping: server/discover is the cheapest request every server answers.
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Era:ping(opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.cache = false
  local res, err = self.client:request("server/discover", nil, o)
  if res == nil then return nil, err end
  return json.object()
end

--- No logging/setLevel: every later request asks for this level in its _meta.
---@param level string
---@return table
function Era:set_logging_level(level)
  self.log_level = level
  return json.object()
end

--- The uri joins the subscriptions/listen request (replaced at once; no wait).
---@param uri string
---@return table|nil result, mcp.Error|nil err
function Era:subscribe(uri)
  local res = self.client:server_capabilities().resources
  if type(res) ~= "table" or res.subscribe ~= true then
    return nil, errors.new(nil, "the server does not support resource subscriptions", nil,
      { kind = "protocol", method = "subscriptions/listen" })
  end
  self.listen:subscribe(uri, true)
  return json.object()
end

---@param uri string
---@return table
function Era:unsubscribe(uri)
  self.listen:subscribe(uri, nil)
  return json.object()
end

-- ---- what the server sends -------------------------------------------------------------------

--- A notification arrived: false when it belongs to another (older) listen request and must be
--- dropped; else the cache drops what it makes stale.
---@param method string
---@param params table
---@return boolean
function Era:on_notification(method, params)
  if not self.listen:accept(method, params) then return false end
  self.cache:on_notification(method, params)
  return true
end

--- The notification handlers changed: ask the listen request for what they want now.
function Era:handlers_changed()
  self.listen:refresh()
end

--- The roots changed: 2026-07-28 has no roots/list_changed (a server asks roots/list again).
---@return boolean
function Era:roots_changed()
  return true
end

-- ---- tools and tasks ---------------------------------------------------------------------------

--- Whether a result of method is a task that call_tool follows (its progress token stays valid).
---@param method string
---@param res any
---@param opts table
---@return boolean
function Era:is_task_result(method, res, opts)
  return method == "tools/call" and type(res) == "table" and res.resultType == "task"
end

--- A tools/call's params: 2026-07-28 has no task augmentation (the server decides).
---@param params table
---@param task table|nil
---@return table
function Era:tool_call_params(params, task)
  return params
end

--- A tools/call's result, as the request returned it (a task is already followed there).
---@param res table
---@param opts table
---@return table|nil result, mcp.Error|nil err
function Era:tool_result(res, opts)
  return res
end

--- A tools/list page: with the protocol's HTTP headers, a tool whose x-mcp-header bindings are
--- invalid is dropped (and reported); the bindings of the others are kept for call_tool.
---@param res table the page's result
---@param first boolean the first page (the bindings start over)
---@return table res
function Era:tools_page(res, first)
  if not self.tool_headers then return res end
  if first then self.tool_bindings = {} end
  local client = self.client
  res.tools = modern.filter_tools(res.tools, self.tool_bindings, function(e) client:_report(e) end)
  return res
end

--- The tasks this client's calls created, with their last known state (no tasks/list).
---@param opts table|nil
---@return table[]
function Era:list_tasks(opts)
  return self.client:_known_tasks()
end

-- ---- lifecycle ---------------------------------------------------------------------------------

--- The connection is up (init: the InitializeResult the probe made): the transport takes the
--- version, and the listen request asks for what handlers registered before connect want.
---@param init table
---@return boolean
function Era:start(init)
  self.client:_set_transport_version(init.protocolVersion)
  self.listen:refresh()
  return true
end

--- The connection closed: nothing to renew (a modern connection keeps no stream it could lose).
---@param reason string|nil
function Era:connection_closed(reason) end

--- Forget every cached result.
function Era:clear_cache()
  self.cache:clear()
end

--- The era ends (close, or a new connect): no listen, none scheduled.
function Era:close()
  self.listen:forget()
end

return M
