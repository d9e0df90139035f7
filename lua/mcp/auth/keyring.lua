--- A token store in the desktop keyring (the freedesktop Secret Service: GNOME Keyring, KWallet,
--- KeePassXC), through `secret-tool` run with an argument vector (core.run_program: no shell, the
--- secret on its stdin, never in an argument). Each record is one secret with the attributes
--- `service` (opts.service, default "lua-mcp") and `key` (a SHA-256 of the provider's key).
---
---   local store = assert(mcp.auth.keyring_store())   -- nil, err when no keyring is running
---   mcp.auth.interactive_provider({ server_url = url, store = store })
local core = require("mcp.core")
local errors = require("mcp.errors")
local json = require("mcp.json")

local M = {}

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

---@class mcp.auth.KeyringStore
local Keyring = {}
Keyring.__index = Keyring

function Keyring:_run(args, input)
  local argv = { self.tool }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  return core.run_program(argv, input, self.timeout_ms)
end

function Keyring:_attrs(key)
  return "service", self.service, "key", hex(core.sha256(key)):sub(1, 32)
end

--- The record saved under key, or nil (none, or the keyring cannot be read).
---@param key string
---@return table|nil
function Keyring:load(key)
  local r = self:_run({ "lookup", self:_attrs(key) })
  if r == nil or r.status ~= 0 or r.stdout == "" then return nil end
  local doc = json.decode((r.stdout:gsub("%s+$", "")))
  if type(doc) ~= "table" or doc.key ~= key or type(doc.record) ~= "table" then return nil end
  return doc.record
end

--- Save a record (raises when the keyring refuses: a store that cannot save is an error the
--- login must not hide).
---@param key string
---@param rec table
function Keyring:save(key, rec)
  local r, err = self:_run({ "store", "--label=lua-mcp OAuth: " .. key, self:_attrs(key) },
    json.encode({ key = key, record = rec }))
  if r ~= nil and r.status ~= 0 then err = (r.stderr:gsub("%s+$", "")) end
  if err then error("mcp.auth: the keyring store cannot save: " .. tostring(err), 2) end
end

--- Forget the record saved under key.
---@param key string
function Keyring:delete(key)
  self:_run({ "clear", self:_attrs(key) })
end

function Keyring:__tostring() return "mcp.auth.keyring_store(" .. self.service .. ")" end

--- A store in the Secret Service. opts: service ("lua-mcp"), tool (the secret-tool program,
--- "secret-tool"), timeout_ms (10000). Returns nil, err (kind "unavailable") when secret-tool is
--- missing or no keyring answers (no D-Bus session, no Secret Service, a locked or missing
--- collection).
---@param opts table|nil
---@return mcp.auth.KeyringStore|nil store, mcp.Error|nil err
function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("mcp.auth.keyring_store: opts must be a table", 2) end
  local self = setmetatable({ service = opts.service or "lua-mcp", tool = opts.tool or "secret-tool",
    timeout_ms = opts.timeout_ms or 10000 }, Keyring)
  if type(self.service) ~= "string" or self.service == "" then
    error("mcp.auth.keyring_store: service must be a non-empty string", 2)
  end
  -- A lookup of nothing: a running keyring answers "not found" (status 1) and says nothing.
  local r, err = self:_run({ "lookup", "service", self.service, "key", "lua-mcp-probe" })
  if r ~= nil and r.status == 127 then err = self.tool .. " is not installed (Debian: libsecret-tools)" end
  if r ~= nil and r.status ~= 127 and r.stderr:find("%S") then err = (r.stderr:gsub("%s+$", "")) end
  if err then
    return nil, errors.new(nil, "mcp.auth.keyring_store: no keyring is available: " .. tostring(err), nil,
      { kind = "unavailable" })
  end
  return self
end

return M
