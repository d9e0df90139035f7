--- Trust on first use for tool definitions: the drift fingerprints (mcp.tools.drift) of the
--- tools a human approved, kept per server in files, so that a tool whose description, schema or
--- title changed after approval (a "rug pull": a server that turns a harmless tool into an
--- instruction to the model) is held back until approved again. A tool seen for the first time is
--- approved on first use, unless opts.ask says otherwise.
---
--- Files: one per server in the token store's directory ($XDG_DATA_HOME/lua-mcp), mode 0600 in a
--- directory of mode 0700, written atomically (mcp.core.write_private_file).
local core = require("mcp.core")
local datadir = require("mcp.util.datadir")
local drift = require("mcp.tools.drift")
local json = require("mcp.json")

local M = {}

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

---@class mcp.tools.PinStore
---@field dir string|nil nil: in memory only
local Store = {}
Store.__index = Store

--- The file of a server's pins (a SHA-256 of its name: any name is a safe file name).
---@param server string
---@return string|nil
function Store:path(server)
  if self.dir == nil then return nil end
  return self.dir .. "/tools-" .. hex(core.sha256(server)):sub(1, 32) .. ".json"
end

--- The approved fingerprints of a server: a map tool name -> digest (empty when none).
---@param server string
---@return table<string, string>
function Store:load(server)
  if self.memory[server] then return self.memory[server] end
  local pins = {}
  local path = self:path(server)
  local f = path and io.open(path, "rb")
  if f then
    local doc = json.decode(f:read("*a"))
    f:close()
    if type(doc) == "table" and doc.server == server and type(doc.tools) == "table" then
      for name, d in pairs(doc.tools) do
        if type(name) == "string" and type(d) == "string" then pins[name] = d end
      end
    end
  end
  self.memory[server] = pins
  return pins
end

function Store:_save(server, pins)
  self.memory[server] = pins
  if self.dir == nil then return true end
  local tools = json.object()
  for k, v in pairs(pins) do tools[k] = v end
  local ok, err = core.mkdir_private(self.dir)
  if ok then ok, err = core.write_private_file(self:path(server), json.encode({ server = server, tools = tools })) end
  if not ok then
    return nil, require("mcp.errors").new(nil, "cannot save the approved tools of " .. server .. ": " .. tostring(err),
      nil, { kind = "config" })
  end
  return true
end

-- The server's definition of a tool: a converted tool's (its own input_schema may be the
-- automatic one), else the tool itself (a raw definition or a hub entry).
local function definition_of(t)
  local m = type(t.provider_metadata) == "table" and t.provider_metadata.mcp
  if type(m) == "table" and type(m.definition) == "table" then return m.definition end
  return t
end

-- The server a tool belongs to and its name there: opts.server, else a hub entry's fields.
local function key_of(t, server)
  local s = server or t.server
  if type(s) ~= "string" then error("mcp.tools.pin_store: no server for tool " .. tostring(t.name) .. " (pass opts.server)", 3) end
  return s, t.original_name or t.name
end

--- Approve tools as they are now (their fingerprints replace the pinned ones).
---@param tools table[] tools (converted, raw definitions, or hub entries with server/original_name)
---@param opts table|nil server (the server's name; else each tool's `server`)
---@return boolean|nil ok, mcp.Error|nil err
function Store:approve(tools, opts)
  if type(tools) ~= "table" then error("mcp.tools.pin_store:approve: tools must be an array", 2) end
  local changed = {}
  for _, t in ipairs(tools) do
    local server, name = key_of(t, opts and opts.server)
    local d, err = drift.fingerprint_tool(definition_of(t))
    if d == nil then return nil, err end
    local pins = self:load(server)
    pins[name] = d
    changed[server] = pins
  end
  for server, pins in pairs(changed) do
    local ok, err = self:_save(server, pins)
    if not ok then return nil, err end
  end
  return true
end

--- Forget a server's approvals (its next listing is a first use again).
---@param server string
function Store:forget(server)
  self.memory[server] = nil
  local path = self:path(server)
  if path then os.remove(path) end
end

-- Sort tools into allowed, held ({tool, name, server, reason}) and first-seen.
local function classify(self, tools, server_opt)
  local allowed, held, new = {}, {}, {}
  for _, t in ipairs(tools) do
    local server, name = key_of(t, server_opt)
    local d = drift.fingerprint_tool(definition_of(t))
    local pinned = self:load(server)[name]
    if d == nil then
      held[#held + 1] = { tool = t, name = t.name, server = server, reason = "unreadable" }
    elseif pinned == nil then
      new[#new + 1] = t
    elseif pinned == d then
      allowed[#allowed + 1] = t
    else
      held[#held + 1] = { tool = t, name = t.name, server = server, reason = "changed" }
    end
  end
  return allowed, held, new
end

--- Check tools against the approvals: returns the tools to offer the model (pinned and
--- unchanged, and tools seen for the first time, which are pinned now), and the tools held back,
--- each {tool=, name=, server=, reason="changed"|"new"|"unreadable"}. opts.ask(held) -> true
--- (approve them all) or an array of names to approve: the host asks its user; a tool it
--- approves is pinned and offered. opts.first_use = "hold" holds new tools too ("new"),
--- instead of approving them on first use. The third value is an mcp.Error when an approval
--- could not be written to its file (it holds for this store's life).
---@param tools table[] tools of one server (opts.server) or hub entries (each with `server`)
---@param opts table|nil server, ask, first_use ("approve" default, or "hold")
---@return table[] allowed, table[] held, mcp.Error|nil err
function Store:check(tools, opts)
  if type(tools) ~= "table" then error("mcp.tools.pin_store:check: tools must be an array", 2) end
  opts = opts or {}
  local allowed, held, new = classify(self, tools, opts.server)
  local save_err
  if opts.first_use == "hold" then
    for _, t in ipairs(new) do
      local server = key_of(t, opts.server)
      held[#held + 1] = { tool = t, name = t.name, server = server, reason = "new" }
    end
  elseif #new > 0 then
    local ok, err = self:approve(new, opts) -- pinned in memory even when the file cannot be written
    if not ok then save_err = err end
    for _, t in ipairs(new) do allowed[#allowed + 1] = t end
  end
  if #held > 0 and opts.ask then
    local answer = opts.ask(held)
    local yes = {}
    if answer == true then
      for _, h in ipairs(held) do yes[h.name] = true end
    elseif type(answer) == "table" then
      for _, n in ipairs(answer) do yes[n] = true end
    end
    local still, approved = {}, {}
    for _, h in ipairs(held) do
      if yes[h.name] then approved[#approved + 1] = h.tool else still[#still + 1] = h end
    end
    if #approved > 0 then
      local ok, err = self:approve(approved, opts)
      if not ok then save_err = err end
      for _, t in ipairs(approved) do allowed[#allowed + 1] = t end
    end
    held = still
  end
  return allowed, held, save_err
end

--- A verify hook for mcp.hub (its `verify` option, which runs on every tool call, auto-approved
--- ones too) that enforces the pins at call time: a call to a tool whose definition changed since
--- it was approved is denied ("deny", reason) unless ask({tool, name, server, reason}) returns true
--- (the tool is approved again); a tool seen for the first time is pinned (first_use = "hold":
--- denied as "new" unless ask approves). Otherwise "allow".
---@param opts table|nil ask (function), first_use ("approve"|"hold")
---@return function hook
function Store:verify_hook(opts)
  opts = opts or {}
  return function(req)
    local def = req.definition
    if type(def) ~= "table" then
      return "deny", "tool '" .. req.tool .. "' of server '" .. req.server .. "' is not in its listing: nothing to check it against"
    end
    local t = setmetatable({ server = req.server, original_name = req.tool }, { __index = def })
    local _, held = self:check({ t }, { ask = opts.ask, first_use = opts.first_use })
    if #held > 0 then
      return "deny", "tool '" .. req.tool .. "' of server '" .. req.server .. "' is held back: its definition "
        .. (held[1].reason == "new" and "was never approved" or "changed since it was approved") .. " (mcp.tools.pin_store)"
    end
    return "allow"
  end
end

--- An approve hook for mcp.hub (its `approve` option): the verify hook's check (verify_hook),
--- then the call goes to nxt (the host's own hook) when given, else it is allowed. A server's
--- `auto_approve` (or an earlier "always") skips approve hooks: pass verify_hook as the hub's
--- `verify` to check those calls too.
---@param opts table|nil ask (function), next (a hub approve hook), first_use ("approve"|"hold")
---@return function hook
function Store:approve_hook(opts)
  opts = opts or {}
  local verify = self:verify_hook(opts)
  return function(req)
    local answer, reason = verify(req)
    if answer ~= "allow" then return answer, reason end
    if opts.next then return opts.next(req) end
    return "allow"
  end
end

--- A store of approved tool definitions. opts.dir: the directory (default: the token store's,
--- $XDG_DATA_HOME/lua-mcp); opts.dir = false keeps the approvals in memory only.
---@param opts table|nil dir (string|false)
---@return mcp.tools.PinStore
function M.pin_store(opts)
  local dir = opts and opts.dir
  if dir == nil then
    dir = datadir.default_dir()
    if dir == nil then error("mcp.tools.pin_store: no directory (set XDG_DATA_HOME or HOME, or pass dir)", 2) end
  elseif dir == false then
    dir = nil
  elseif type(dir) ~= "string" or dir == "" then
    error("mcp.tools.pin_store: opts.dir must be a directory path or false", 2)
  end
  return setmetatable({ dir = dir and (dir:gsub("/+$", "")) or nil, memory = {} }, Store)
end

return M
