--- URL-mode elicitation's protocol side (2025-11-25, SEP-1036): the completions a server
--- announces with notifications/elicitation/complete, and a request the server failed with
--- -32042 (URLElicitationRequiredError, data.elicitations: URL-mode elicitation params). The
--- listed elicitations go through the client's elicitation handler (which shows the URL and opens
--- it only on the user's yes); once every one was accepted and its completion has arrived, the
--- request is sent again: at most MAX_ROUNDS times. Each wait for a completion is bounded as the
--- call is (its timeout_ms, else the client's request_timeout_ms; its max_total_timeout_ms), and
--- ends at once when the call's cancel token fires or the connection closes. A decline or cancel
--- ends the call with a clear error (kind "declined").
local core = require("mcp.core")
local errors = require("mcp.errors")
local handlers = require("mcp.handlers")
local sched = require("mcp.sched")

local M = {}

--- The JSON-RPC error code of URLElicitationRequiredError (2025-11-25 only).
M.URL_ELICITATION_REQUIRED = -32042

--- How often one call is sent again after -32042.
M.MAX_ROUNDS = 3

--- Completions kept (a completion may arrive before the client waits for it); older ones are
--- forgotten first.
M.KEEP = 64

--- A client's URL elicitation state: the completions that arrived (done, in order) and who waits
--- for which (waiters). The client holds it (Client:_url_elicitations() makes it when first used).
---@return table
function M.new()
  return { done = {}, order = {}, waiters = {} }
end

local function state(client)
  return client:_url_elicitations()
end

--- notifications/elicitation/complete: remember the id and wake who waits for it. An unknown or
--- repeated id is harmless (the spec: ignore it).
---@param client mcp.Client
---@param params table
function M.completed(client, params)
  local id = params.elicitationId
  if type(id) ~= "string" then return end
  local s = state(client)
  local waiters = s.waiters[id]
  s.waiters[id] = nil
  if not s.done[id] then
    s.done[id] = true
    s.order[#s.order + 1] = id
    if #s.order > M.KEEP then s.done[table.remove(s.order, 1)] = nil end
  end
  for _, cb in ipairs(waiters or {}) do cb(true) end
end

--- Whether the completion of elicitation id has arrived.
---@param client mcp.Client
---@param id string
---@return boolean
function M.is_complete(client, id)
  return state(client).done[id] == true
end

-- Wait for the completion of id (sched.await_call's start): cb gets how the wait ended,
-- "complete", "closed" (the connection), "timeout" (after ms; 0: never) or "cancelled" (the
-- call's cancel token), once; whatever ended it first forgets the waiter and the timer.
local function start_wait(cb, client, id, ms, cancel)
  local s = state(client)
  local timer, over, done
  local function finish(how)
    if over then return end
    over = true
    if timer then timer:cancel() end
    if cancel then cancel:_attach(nil) end
    -- a late completion must not call a callback that is done
    local l = s.waiters[id]
    for i = #(l or {}), 1, -1 do
      if l[i] == done then table.remove(l, i) end
    end
    if l and #l == 0 then s.waiters[id] = nil end
    cb(how)
  end
  done = function(ok) finish(ok and "complete" or "closed") end
  local list = s.waiters[id] or {}
  list[#list + 1] = done
  s.waiters[id] = list
  if ms and ms > 0 then timer = core.timer(ms, function() finish("timeout") end) end
  if cancel then cancel:_attach(function() finish("cancelled") end) end
end

--- The connection closed: every wait ends (the call then fails as it resends on a closed client).
---@param s table the client's state (M.new)
function M.closed(s)
  local waiters = s.waiters
  s.waiters = {}
  for _, list in pairs(waiters) do
    for _, cb in ipairs(list) do cb(false) end
  end
end

-- The error of a wait that ended without the completion of elicitation e ({elicitationId, url}).
local function wait_error(how, e, timeout_ms, o)
  local id, method = e.elicitationId, o.method
  local data = { elicitationId = id, url = e.url }
  if how == "cancelled" then
    return errors.new(nil, "request cancelled while waiting for URL elicitation " .. id .. ": "
      .. tostring(o.cancel.reason), data, { kind = "cancelled", method = method, cause = o.cause })
  elseif how == "closed" then
    return errors.new(nil, "the connection closed while waiting for URL elicitation " .. id, data,
      { kind = "closed", method = method, cause = o.cause })
  end
  return errors.new(nil, "URL elicitation " .. id .. " did not complete within " .. tostring(timeout_ms)
    .. " ms (no notifications/elicitation/complete from the server)", data,
    { kind = "timeout", method = method, cause = o.cause })
end

--- Wait until the completion of every listed elicitation has arrived, each wait bounded by
--- timeout_ms (0 or nil: unbounded) and ended by o.cancel (a cancel token) firing. true, or nil
--- and an mcp.Error: kind "timeout", "cancelled" or "closed", data {elicitationId, url}, cause
--- o.cause.
---@param client mcp.Client
---@param list table[] the elicitations ({elicitationId = string, url = string})
---@param timeout_ms number|nil
---@param o table|nil method (the request that waits), cancel (its token), cause (the -32042 error)
---@return boolean|nil ok, mcp.Error|nil err
function M.await(client, list, timeout_ms, o)
  o = o or {}
  for _, e in ipairs(list) do
    local id = e.elicitationId
    if not M.is_complete(client, id) then
      local how = "closed"
      if o.cancel and o.cancel.cancelled then
        how = "cancelled"
      elseif client:is_connected() then
        how = sched.await_call(start_wait, client, id, timeout_ms, o.cancel)
      end
      if how ~= "complete" and not M.is_complete(client, id) then return nil, wait_error(how, e, timeout_ms, o) end
    end
  end
  return true
end

-- The URL-mode elicitations of a -32042 error's data, or nil.
local function listed(err)
  local data = err.data
  local list = type(data) == "table" and data.elicitations
  if type(list) ~= "table" or list[1] == nil then return nil end
  for _, e in ipairs(list) do
    if type(e) ~= "table" or type(e.url) ~= "string" or type(e.elicitationId) ~= "string" then return nil end
  end
  return list
end

-- Run one round's elicitations through the handler: true when the user accepted every one, or
-- nil, err.
local function ask(client, method, err, list)
  for _, e in ipairs(list) do
    local params = {}
    for k, v in pairs(e) do params[k] = v end
    params.mode = "url"
    if type(params.message) ~= "string" then params.message = err.message end
    -- the elicitation/create handler of the one handler table (checks, then the client's handler)
    local ok, result, herr = sched.pcall(handlers.SERVER_REQUESTS["elicitation/create"].run, client, params)
    if not ok then
      return nil, errors.new(nil, "the elicitation handler raised: " .. tostring(result), nil,
        { kind = "handler", method = method })
    end
    if result == nil then return nil, herr end
    if result.action ~= "accept" then
      return nil, errors.new(err.code, "the server needs a URL elicitation (" .. e.url .. ") that the user "
        .. (result.action == "decline" and "declined" or "cancelled"), err.data,
        { kind = "declined", method = method, cause = err })
    end
  end
  return true
end

-- The bound on each wait for a completion: the call's own (timeout_ms, else the client's
-- request_timeout_ms), and its max_total_timeout_ms when that is sooner. 0: none.
local function wait_bound(client, opts)
  local ms = client:_timeout_ms(opts)
  local total = opts.max_total_timeout_ms
  if total ~= nil and (ms <= 0 or total < ms) then ms = total end
  return ms
end

--- After a request failed with -32042: fulfil the listed elicitations and send it again
--- (resend(), the era's own path of a request), up to MAX_ROUNDS times. Without an elicitation
--- handler that takes URL mode, or with data that lists no valid URL elicitation, the error is
--- returned as it is.
---@param client mcp.Client
---@param method string
---@param err mcp.Error the -32042 error
---@param resend fun(): any, mcp.Error|nil
---@param opts table the call's checked options (timeout_ms, max_total_timeout_ms, cancel)
---@return any result, mcp.Error|nil err
function M.after_required(client, method, err, resend, opts)
  local handler, url = client:_handler("elicitation")
  if handler == nil or not url then return nil, err end
  local timeout_ms = wait_bound(client, opts)
  local rounds = 0
  while err ~= nil and err.code == M.URL_ELICITATION_REQUIRED and rounds < M.MAX_ROUNDS do
    local list = listed(err)
    if list == nil then return nil, err end
    rounds = rounds + 1
    local ok, aerr = ask(client, method, err, list)
    if ok == nil then return nil, aerr end
    local werr
    ok, werr = M.await(client, list, timeout_ms, { method = method, cancel = opts.cancel, cause = err })
    if not ok then return nil, werr end
    local res
    res, err = resend()
    if res ~= nil then return res end
  end
  if err ~= nil and err.code == M.URL_ELICITATION_REQUIRED then
    return nil, errors.new(err.code, "the server still requires a URL elicitation after " .. rounds
      .. " rounds: " .. err.message, err.data, { kind = "rpc", method = method, cause = err })
  end
  return nil, err
end

return M
