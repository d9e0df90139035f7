--- Token stores for OAuth providers: where a provider keeps its client registration and tokens,
--- one record (a table) per key (the MCP server URL). A store is any table with
--- load(key) -> record | nil | nil, err, save(key, record) (-> true | nil, err, or raises) and
--- delete(key); optionally try_lock(key) -> lock | false (held elsewhere) | nil, err, a lock with
--- lock:unlock(), which providers hold around read-refresh-write (many processes, or many
--- providers, sharing one store refresh once).
---
--- memory(): a table in this process. file{dir=}: one JSON file per key under
--- $XDG_DATA_HOME/lua-mcp (~/.local/share/lua-mcp), mode 0600 in a directory of mode 0700,
--- written atomically (a temporary file renamed over the old one), locked with flock on a
--- file of its own per key; a directory or file that is another user's, gives group/other
--- access or is a symbolic link is refused (nil, err), never followed.
local core = require("mcp.core")
local errors = require("mcp.errors")
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

-- The lock of a key of a memory store (providers of this process sharing one store).
local MemoryLock = {}
MemoryLock.__index = MemoryLock
function MemoryLock:unlock()
  if self.store.locks[self.key] == self then self.store.locks[self.key] = nil end
end

--- The key's lock, or false while another holder has it.
---@param key string
---@return table|false
function Memory:try_lock(key)
  if self.locks[key] then return false end
  local lock = setmetatable({ store = self, key = key }, MemoryLock)
  self.locks[key] = lock
  return lock
end

--- A store in memory (lost at exit).
---@return mcp.auth.MemoryStore
function M.memory()
  return setmetatable({ records = {}, locks = {} }, Memory)
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

--- The file of a key's lock (kept: a lock file removed while held would let a second holder in).
function File:lock_path(key)
  return (self:path(key):gsub("%.json$", ".lock"))
end

local function refused(msg)
  return nil, errors.new(nil, "mcp.auth.file_store: " .. tostring(msg), nil, { kind = "config" })
end

-- The directory, created (0700) when missing, and checked: true, or nil, err.
local function private_dir(self)
  local ok, err = core.mkdir_private(self.dir)
  if ok then ok, err = core.check_private(self.dir, "dir") end
  if not ok then return refused(err) end
  return true
end

--- The record saved under key; nil when there is none; nil, err (an mcp.Error, kind "config")
--- when the directory or the file is another user's, gives group/other access or is a symbolic
--- link (the message names the path and the fix), or cannot be read.
---@param key string
---@return table|nil record, mcp.Error|nil err
function File:load(key)
  local ok, err = core.check_private(self.dir, "dir")
  if ok == nil then return refused(err) end
  if not ok then return nil end
  local text, rerr = core.read_private_file(self:path(key))
  if text == nil then return refused(rerr) end
  if not text then return nil end
  local doc = json.decode(text)
  if type(doc) ~= "table" or doc.key ~= key or type(doc.record) ~= "table" then return nil end
  return doc.record
end

--- Save a record: true, or nil, err (the checks of load, on the directory and on the file it
--- replaces; a write that failed).
---@param key string
---@param rec table
---@return boolean|nil ok, mcp.Error|nil err
function File:save(key, rec)
  local ok, err = private_dir(self)
  if not ok then return nil, err end
  local path = self:path(key)
  ok, err = core.check_private(path, "file")
  if ok ~= nil then ok, err = core.write_private_file(path, json.encode({ key = key, record = rec })) end
  if not ok then return refused(err) end
  return true
end

function File:delete(key)
  os.remove(self:path(key))
end

--- The key's lock (flock on its own file: mcp.core.file_lock), false while another process or
--- lock object holds it, or nil, err (the checks of load).
---@param key string
---@return userdata|false|nil lock, mcp.Error|nil err
function File:try_lock(key)
  local ok, err = private_dir(self)
  if not ok then return nil, err end
  local lock, lerr = core.file_lock(self:lock_path(key))
  if lock == nil then return refused(lerr) end
  return lock
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
