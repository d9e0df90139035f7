--- subscriptions/listen (2026-07-28): in the modern era the list_changed and resources/updated
--- notifications arrive only on a listen request the client keeps open. The client keeps at most
--- one, asking for what its handlers and subscribe_resource want (and the server advertises);
--- when that changes, the old listen is cancelled (stdio: notifications/cancelled; HTTP: its
--- stream is closed) and a new one is sent. Notifications that name another subscription are
--- dropped; the acknowledgment is compared with what was asked for. A listen that ends abruptly
--- (its HTTP stream dropped without a result) is opened again after a delay that doubles with each
--- end in a row that had no acknowledgment between (REOPEN), until it gives up; a listen the server
--- ends (a result, or its notifications/cancelled) stays ended.
---
--- One Listen object per modern era object (lua/mcp/era/modern.lua), which owns it; it holds the
--- listen state and reaches the client only through the client's internal interface
--- (docs/ARCHITECTURE.md, The protocol eras).
local core = require("mcp.core")
local errors = require("mcp.errors")
local json = require("mcp.json")

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

---@class mcp.Listen
---@field current table|nil the open listen request: {id, text, filter, done, acknowledged}
---@field timer userdata|nil the pending re-open of an abruptly ended listen
---@field tries integer|nil abrupt ends in a row without an acknowledgment
---@field subscriptions table uri -> true (subscribe_resource)
local Listen = {}
Listen.__index = Listen

--- The listen state of one modern era.
---@param era table the modern era object: with_meta(params), protocol_headers(method, params)
---@param client mcp.Client
---@return mcp.Listen
function M.new(era, client)
  return setmetatable({ era = era, client = client, subscriptions = {} }, Listen)
end

--- What the client wants to hear about now: the `notifications` filter of a listen request, and
--- its canonical text (to compare filters), or nil when there is nothing to listen for.
---@return table|nil filter, string|nil text
function Listen:wanted()
  local client = self.client
  local caps = client:server_capabilities()
  local filter, parts = json.object(), {}
  for _, l in ipairs(LIST_FLAGS) do
    local cap = caps[l.cap]
    if type(cap) == "table" and cap.listChanged == true and client:_has_notification_handler(l.method) then
      filter[l.flag] = true
      parts[#parts + 1] = l.flag
    end
  end
  local uris = {}
  for uri in pairs(self.subscriptions) do uris[#uris + 1] = uri end
  table.sort(uris)
  if #uris > 0 then
    filter.resourceSubscriptions = json.array(uris)
    parts[#parts + 1] = "uris:" .. table.concat(uris, "\n")
  end
  if #parts == 0 then return nil end
  return filter, table.concat(parts, "\0")
end

function Listen:_cancel_reopen()
  if self.timer then self.timer:cancel() end
  self.timer = nil
end

--- Cancel the open listen request (if any) and a scheduled re-open.
---@param reason string
function Listen:stop(reason)
  local l = self.current
  self.current = nil
  self:_cancel_reopen()
  if l and not l.done then self.client:_cancel_request(l.id, reason) end
end

--- The era ends (a new connection, or none): no listen, none scheduled, no ends counted.
function Listen:forget()
  self:_cancel_reopen()
  self.current, self.tries = nil, nil
end

-- The listen `entry` ended abruptly (kind "transport"): schedule a new one, or give up. Returns
-- what to add to the report.
function Listen:_schedule_reopen(entry)
  local r = M.REOPEN
  local tries = entry.acknowledged and 1 or (self.tries or 0) + 1
  self.tries = tries
  if tries > r.max_tries then
    return "; gave up after " .. r.max_tries .. " abrupt ends in a row"
  end
  local delay = math.min(r.base_ms * 2 ^ (tries - 1), r.max_ms)
  -- (not a weak timer: an open listen keeps the loop alive, a task may wait for its notification,
  -- and so does the wait for its return)
  self.timer = core.timer(delay, function()
    self.timer = nil
    self:refresh(true) -- (no call asked for it: the client's own work)
  end)
  return ("; opening it again in %d ms"):format(delay)
end

--- Open, replace or close the listen request so that it asks for what wanted() says. Does not
--- wait: the request stays open until the server ends it or the client replaces it. background:
--- no call asked for it (the re-open of an abruptly ended listen): it is sent as the client's own
--- work, which the transport treats as it does a notification (OAuth: a refresh, never a login).
---@param background boolean|nil
function Listen:refresh(background)
  local client = self.client
  if not client:_connected() then return end
  local filter, text = self:wanted()
  local cur = self.current
  if cur and not cur.done and cur.text == text then return end
  self:stop("the subscriptions changed")
  if filter == nil then return end
  local entry = { text = text, filter = filter }
  local params = self.era:with_meta({ notifications = filter })
  local function done(_, code, message, data, kind)
    entry.done = true
    local current = self.current == entry
    if current then self.current = nil end
    if kind ~= nil and kind ~= "cancelled" and kind ~= "closed" then
      local more = ""
      if current and kind == "transport" and client:_connected() then more = self:_schedule_reopen(entry) end
      client:_report(errors.new(code, "subscriptions/listen ended: " .. tostring(message) .. more, data,
        { kind = kind, method = "subscriptions/listen" }))
    end
  end
  -- Mcp-Method on HTTP (the transports that take the protocol's headers); nil elsewhere
  local hdrs = self.era:protocol_headers("subscriptions/listen", params)
  local id, err = client:_send_detached("subscriptions/listen", params, done, hdrs, background)
  if not id then
    client:_report(errors.new(nil, "subscriptions/listen could not be sent: " .. tostring(err), nil,
      { kind = "transport", method = "subscriptions/listen" }))
    return
  end
  entry.id = id
  self.current = entry
end

--- Add (true) or drop (nil) a resource subscription and replace the listen request at once.
---@param uri string
---@param on true|nil
function Listen:subscribe(uri, on)
  self.subscriptions[uri] = on
  self:refresh()
end

--- A notification in the modern era: false when it belongs to another (older) listen request and
--- must be dropped. The acknowledgment is checked against what was asked for.
---@param method string
---@param params table
---@return boolean
function Listen:accept(method, params)
  local meta = type(params._meta) == "table" and params._meta or nil
  local sid = meta and meta[M.META_SUBSCRIPTION_ID]
  local l = self.current
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
      self.client:_report(errors.new(nil, "the server does not honor every subscription asked for: "
        .. table.concat(missing, ", "), got, { kind = "protocol", method = "subscriptions/listen" }))
    end
  end
  return true
end

return M
