--- URL-mode elicitation's protocol side (2025-11-25, SEP-1036): the completions a server
--- announces with notifications/elicitation/complete, and a request the server failed with
--- -32042 (URLElicitationRequiredError, data.elicitations: URL-mode elicitation params). The
--- listed elicitations go through the client's elicitation handler (which shows the URL and opens
--- it only on the user's yes); once every one was accepted and its completion has arrived, the
--- request is sent again: at most MAX_ROUNDS times, and each wait for a completion is bounded by
--- the call's own timeout_ms (else COMPLETION_TIMEOUT_MS) and ends when the connection closes. A
--- decline or cancel ends the call with a clear error (kind "declined").
local core = require("mcp.core")
local errors = require("mcp.errors")
local handlers = require("mcp.handlers")
local sched = require("mcp.sched")

local M = {}

--- The JSON-RPC error code of URLElicitationRequiredError (2025-11-25 only).
M.URL_ELICITATION_REQUIRED = -32042

--- How often one call is sent again after -32042.
M.MAX_ROUNDS = 3

--- How long a completion is waited for when the call gives no timeout_ms of its own: the user
--- finishes a flow in a browser (a sign-in, a payment), which takes longer than a request.
M.COMPLETION_TIMEOUT_MS = 300000

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

local function start_wait(cb, client, id, ms)
  local s = state(client)
  local timer
  local function done(ok)
    if timer then timer:cancel() end
    cb(ok)
  end
  local list = s.waiters[id] or {}
  list[#list + 1] = done
  s.waiters[id] = list
  if ms and ms > 0 then
    timer = core.timer(ms, function()
      -- forget this waiter first: a late completion must not call a callback that is done
      local l = s.waiters[id] or {}
      for i = #l, 1, -1 do
        if l[i] == done then table.remove(l, i) end
      end
      if #l == 0 and s.waiters[id] == l then s.waiters[id] = nil end
      cb(false)
    end)
  end
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

--- Wait until the completion of every id has arrived, each wait bounded by timeout_ms (0 or
--- nil: unbounded). true, or nil and an mcp.Error (kind "timeout", or "closed").
---@param client mcp.Client
---@param ids string[]
---@param timeout_ms number|nil
---@param method string|nil the request that waits (for the error)
---@return boolean|nil ok, mcp.Error|nil err
function M.await(client, ids, timeout_ms, method)
  for _, id in ipairs(ids) do
    if not M.is_complete(client, id) then
      local ok = client:is_connected() and sched.await_call(start_wait, client, id, timeout_ms)
      if not ok and not M.is_complete(client, id) and not client:is_connected() then
        return nil, errors.new(nil, "the connection closed while waiting for URL elicitation " .. id, nil,
          { kind = "closed", method = method })
      elseif not ok and not M.is_complete(client, id) then
        return nil, errors.new(nil, "URL elicitation " .. id .. " did not complete within " .. tostring(timeout_ms)
          .. " ms", { elicitationId = id }, { kind = "timeout", method = method })
      end
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

-- Run one round's elicitations through the handler: their ids, or nil, err.
local function ask(client, method, err, list)
  local ids = {}
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
    ids[#ids + 1] = e.elicitationId
  end
  return ids
end

--- After a request failed with -32042: fulfil the listed elicitations and send it again
--- (resend()), up to MAX_ROUNDS times. Without an elicitation handler that takes URL mode, or
--- with data that lists no valid URL elicitation, the error is returned as it is.
---@param client mcp.Client
---@param method string
---@param err mcp.Error the -32042 error
---@param resend fun(): any, mcp.Error|nil
---@param timeout_ms number|nil the bound on each wait for a completion (the call's timeout_ms; nil or
--- 0: COMPLETION_TIMEOUT_MS)
---@return any result, mcp.Error|nil err
function M.after_required(client, method, err, resend, timeout_ms)
  if timeout_ms == nil or timeout_ms <= 0 then timeout_ms = M.COMPLETION_TIMEOUT_MS end
  local handler, url = client:_handler("elicitation")
  if handler == nil or not url then return nil, err end
  local rounds = 0
  while err ~= nil and err.code == M.URL_ELICITATION_REQUIRED and rounds < M.MAX_ROUNDS do
    local list = listed(err)
    if list == nil then return nil, err end
    rounds = rounds + 1
    local ids, aerr = ask(client, method, err, list)
    if ids == nil then return nil, aerr end
    local ok, werr = M.await(client, ids, timeout_ms, method)
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
