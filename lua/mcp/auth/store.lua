--- Token stores for OAuth providers: where a provider keeps its client registration and tokens,
--- one record (a table) per key (the MCP server URL). A store is any table with
--- load(key) -> record|nil, save(key, record) and delete(key).
---
--- memory(): a table in this process. file{dir=}: one JSON file per key under
--- $XDG_DATA_HOME/lua-mcp (~/.local/share/lua-mcp), mode 0600 in a directory of mode 0700,
--- written atomically (a temporary file renamed over the old one).
local core = require("mcp.core")
local json = require("mcp.json")

local M = {}

local function copy(v)
  if type(v) ~= "table" then return v end
  local c = {}
  for k, x in pairs(v) do c[k] = copy(x) end
  return setmetatable(c, getmetatable(v))
end

---@class mcp.auth.MemoryStore
local Memory = {}
Memory.__index = Memory
function Memory:load(key) return copy(self.records[key]) end
function Memory:save(key, rec) self.records[key] = copy(rec) end
function Memory:delete(key) self.records[key] = nil end
function Memory:__tostring() return "mcp.auth.memory_store" end

--- A store in memory (lost at exit).
---@return mcp.auth.MemoryStore
function M.memory()
  return setmetatable({ records = {} }, Memory)
end

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

--- The default directory: $XDG_DATA_HOME/lua-mcp, else ~/.local/share/lua-mcp.
---@return string|nil
function M.default_dir()
  return require("mcp.util.datadir").default_dir() -- shared with mcp.tools.pin_store
end

---@class mcp.auth.FileStore
---@field dir string
local File = {}
File.__index = File

--- The file of a key: a SHA-256 of the key, so no URL ends up in a file name.
function File:path(key)
  return self.dir .. "/oauth-" .. hex(core.sha256(key)):sub(1, 32) .. ".json"
end

function File:load(key)
  local f = io.open(self:path(key), "rb")
  if not f then return nil end
  local text = f:read("*a")
  f:close()
  local doc = json.decode(text)
  if type(doc) ~= "table" or doc.key ~= key or type(doc.record) ~= "table" then return nil end
  return doc.record
end

function File:save(key, rec)
  local ok, err = core.mkdir_private(self.dir)
  if ok then ok, err = core.write_private_file(self:path(key), json.encode({ key = key, record = rec })) end
  if not ok then error("mcp.auth: the token store cannot save: " .. tostring(err), 2) end
end

function File:delete(key)
  os.remove(self:path(key))
end

function File:__tostring() return "mcp.auth.file_store(" .. self.dir .. ")" end

--- A store in files (see the module's comment). opts.dir overrides the directory.
---@param opts table|nil
---@return mcp.auth.FileStore
function M.file(opts)
  local dir = opts and opts.dir or M.default_dir()
  if type(dir) ~= "string" or dir == "" then
    error("mcp.auth.file_store: no directory (set XDG_DATA_HOME or HOME, or pass dir)", 2)
  end
  return setmetatable({ dir = (dir:gsub("/+$", "")) }, File)
end

return M
