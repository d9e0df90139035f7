--- subscriptions/listen (2026-07-28): in the modern era the list_changed and resources/updated
--- notifications arrive only on a listen request the client keeps open. The client keeps at most
--- one, asking for what its handlers and subscribe_resource want (and the server advertises);
--- when that changes, the old listen is cancelled (stdio: notifications/cancelled; HTTP: its
--- stream is closed) and a new one is sent. Notifications that name another subscription are
--- dropped; the acknowledgment is compared with what was asked for. A listen that ends abruptly
--- (its HTTP stream dropped without a result) is opened again after a delay that doubles with each
--- end in a row that had no acknowledgment between (REOPEN), until it gives up; a listen the server
--- ends (a result, or its notifications/cancelled) stays ended.
local core = require("mcp.core")
local errors = require("mcp.errors")
local json = require("mcp.json")
local modern = require("mcp.modern")

local M = {}

M.META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

--- Re-opening an abruptly ended listen: the first after base_ms, doubling up to max_ms; after
--- max_tries ends in a row without an acknowledgment it gives up (and reports it).
M.REOPEN = { base_ms = 200, max_ms = 30000, max_tries = 6 }

local LIST_FLAGS = {
  { flag = "toolsListChanged", method = "notifications/tools/list_changed", cap = "tools" },
  { flag = "promptsListChanged", method = "notifications/prompts/list_changed", cap = "prompts" },
  { flag = "resourcesListChanged", method = "notifications/resources/list_changed", cap = "resources" },
}

local function has_handler(client, method)
  local hs = client.notification_handlers
  return (hs[method] ~= nil and #hs[method] > 0) or (hs["*"] ~= nil and #hs["*"] > 0)
end

--- What the client wants to hear about now: the `notifications` filter of a listen request, and
--- its canonical text (to compare filters), or nil when there is nothing to listen for.
---@param client mcp.Client
---@return table|nil filter, string|nil text
function M.wanted(client)
  local caps = client:server_capabilities()
  local filter, parts = json.object(), {}
  for _, l in ipairs(LIST_FLAGS) do
    local cap = caps[l.cap]
    if type(cap) == "table" and cap.listChanged == true and has_handler(client, l.method) then
      filter[l.flag] = true
      parts[#parts + 1] = l.flag
    end
  end
  local uris = {}
  for uri in pairs(client.subscriptions) do uris[#uris + 1] = uri end
  table.sort(uris)
  if #uris > 0 then
    filter.resourceSubscriptions = json.array(uris)
    parts[#parts + 1] = "uris:" .. table.concat(uris, "\n")
  end
  if #parts == 0 then return nil end
  return filter, table.concat(parts, "\0")
end

local function cancel_reopen(client)
  if client.listen_timer then client.listen_timer:cancel() end
  client.listen_timer = nil
end

local function stop(client, reason)
  local l = client.listening
  client.listening = nil
  cancel_reopen(client)
  if l and not l.done and client.session then client.session:cancel(l.id, reason) end
end
M.stop = stop

--- A new connection, or none: no listen, none scheduled, no ends counted.
---@param client mcp.Client
function M.forget(client)
  cancel_reopen(client)
  client.listening, client.listen_tries = nil, nil
end

-- The listen `entry` ended abruptly (kind "transport"): schedule a new one, or give up. Returns
-- what to add to the report.
local function schedule_reopen(client, entry)
  local r = M.REOPEN
  local tries = entry.acknowledged and 1 or (client.listen_tries or 0) + 1
  client.listen_tries = tries
  if tries > r.max_tries then
    return "; gave up after " .. r.max_tries .. " abrupt ends in a row"
  end
  local delay = math.min(r.base_ms * 2 ^ (tries - 1), r.max_ms)
  client.listen_timer = core.timer(delay, function()
    client.listen_timer = nil
    M.refresh(client)
  end)
  return ("; opening it again in %d ms"):format(delay)
end

--- Open, replace or close the listen request so that it asks for what M.wanted says. Does not
--- wait: the request stays open until the server ends it or the client replaces it.
---@param client mcp.Client
function M.refresh(client)
  if client.era ~= "modern" or client.state ~= "connected" or client.session == nil then return end
  local filter, text = M.wanted(client)
  local cur = client.listening
  if cur and not cur.done and cur.text == text then return end
  stop(client, "the subscriptions changed")
  if filter == nil then return end
  local session = client.session
  local entry = { text = text, filter = filter }
  local params = modern.with_meta(client, { notifications = filter }, client:_capabilities())
  local function done(_, code, message, data, kind)
    entry.done = true
    local current = client.listening == entry
    if current then client.listening = nil end
    if kind ~= nil and kind ~= "cancelled" and kind ~= "closed" then
      local more = ""
      if current and kind == "transport" and client.state == "connected" then more = schedule_reopen(client, entry) end
      client:_report(errors.new(code, "subscriptions/listen ended: " .. tostring(message) .. more, data,
        { kind = kind, method = "subscriptions/listen" }))
    end
  end
  local id, err
  if client.tool_headers then -- Mcp-Method on HTTP (the transports that take the protocol's headers)
    id, err = session:request("subscriptions/listen", params, 0, done, nil,
      (modern.request_headers(client, "subscriptions/listen", params)))
  else
    id, err = session:request("subscriptions/listen", params, 0, done)
  end
  if not id then
    client:_report(errors.new(nil, "subscriptions/listen could not be sent: " .. tostring(err), nil,
      { kind = "transport", method = "subscriptions/listen" }))
    return
  end
  entry.id = id
  client.listening = entry
end

--- A notification in the modern era: false when it belongs to another (older) listen request and
--- must be dropped. The acknowledgment is checked against what was asked for.
---@param client mcp.Client
---@param method string
---@param params table
---@return boolean
function M.accept(client, method, params)
  local meta = type(params._meta) == "table" and params._meta or nil
  local sid = meta and meta[M.META_SUBSCRIPTION_ID]
  local l = client.listening
  if sid ~= nil and (l == nil or sid ~= l.id) then return false end
  if method == "notifications/subscriptions/acknowledged" and l then
    local got = type(params.notifications) == "table" and params.notifications or {}
    local missing = {}
    for k, v in pairs(l.filter) do
      if k == "resourceSubscriptions" then
        local honored = {}
        for _, u in ipairs(type(got.resourceSubscriptions) == "table" and got.resourceSubscriptions or {}) do
          honored[u] = true
        end
        for _, u in ipairs(v) do
          if not honored[u] then missing[#missing + 1] = u end
        end
      elseif got[k] ~= true then
        missing[#missing + 1] = k
      end
    end
    l.acknowledged = got
    if #missing > 0 then
      client:_report(errors.new(nil, "the server does not honor every subscription asked for: "
        .. table.concat(missing, ", "), got, { kind = "protocol", method = "subscriptions/listen" }))
    end
  end
  return true
end

return M
