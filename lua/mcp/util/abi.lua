--- Loading the C module mcp.core with a readable error when it was built for another Lua.
---
--- A module built for one Lua ABI fails in another at dlopen, with the linker's "undefined
--- symbol: lua_tointeger", before its own version check can run. The build writes a tag beside
--- core.so (mcp/core.abi: "5.1", "luajit", "5.2", "5.3" or "5.4"); this module reads it before the
--- C module is loaded and refuses a mismatch by name. Without a tag the module is loaded as is,
--- and a loader error naming an undefined Lua API symbol is turned into the same message.
local M = {}

--- The ABI of the running interpreter: "luajit", "5.1", "5.2", "5.3" or "5.4".
---@return string
function M.running()
  if rawget(_G, "jit") then return "luajit" end
  return (_VERSION:match("%d+%.%d+")) or _VERSION
end

-- Which tags each running ABI can load: LuaJIT has the Lua 5.1 API, so a module built against
-- the 5.1 headers loads into it; one built against LuaJIT's headers may use its 5.2 additions
-- (luaL_setfuncs) and does not load into PUC 5.1.
local LOADS = { luajit = { luajit = true, ["5.1"] = true } }

--- Whether a module tagged `built` loads into the running ABI `running`.
---@param built string
---@param running string
---@return boolean
function M.compatible(built, running)
  if built == running then return true end
  return (LOADS[running] or {})[built] == true
end

local function label(abi)
  if abi == "luajit" then return "LuaJIT" end
  return "Lua " .. abi
end

local function interpreter(abi)
  if abi == "luajit" then return "luajit" end
  if abi == "5.1" then return "lua5.1 or luajit" end
  return "lua" .. abi
end

-- package.searchpath is missing on PUC 5.1.
local function searchpath(name, path)
  if package.searchpath then return (package.searchpath(name, path)) end
  local file = name:gsub("%.", "/")
  for template in path:gmatch("[^;]+") do
    local candidate = template:gsub("%?", file)
    local fh = io.open(candidate, "rb")
    if fh then
      fh:close()
      return candidate
    end
  end
  return nil
end

--- The file require("mcp.core") would load from package.cpath, or nil.
---@return string|nil
function M.module_path()
  return searchpath("mcp.core", package.cpath)
end

--- The tag written beside a module file (its directory's core.abi), or nil when there is none.
---@param so_path string path of core.so
---@return string|nil
function M.tag_of(so_path)
  local fh = io.open((so_path:gsub("[^/]*$", "")) .. "core.abi", "rb")
  if not fh then return nil end
  local tag = (fh:read("*l") or ""):match("^%s*(%S+)")
  fh:close()
  return tag
end

--- The readable refusal: which module, built for what, the running Lua, and what to do.
---@param so_path string|nil
---@param built string|nil nil when only the loader's error tells
---@param detail string|nil the loader's words
---@return string
function M.message(so_path, built, detail)
  local running = M.running()
  local lv = running == "luajit" and "5.1" or running
  return ("lua-mcp: the C module mcp.core%s was built for %s, and this is %s%s. Run it with %s, or build"
    .. " it for this Lua: `luarocks --lua-version %s make` (or `luarocks --lua-version %s install lua-mcp`),"
    .. " from a checkout `make LUA=%s`"):format(
    so_path and (" (" .. so_path .. ")") or "",
    built and label(built) or "another Lua", label(running),
    detail and ("; the loader said: " .. detail) or "",
    built and interpreter(built) or "the Lua it was built for", lv, lv, running)
end

--- require("mcp.core"), refusing by name a module built for another Lua.
---@return table core
function M.require_core()
  if package.loaded["mcp.core"] then return package.loaded["mcp.core"] end
  local path = M.module_path()
  local built = path and M.tag_of(path)
  if built and not M.compatible(built, M.running()) then error(M.message(path, built), 0) end
  local ok, core = pcall(require, "mcp.core")
  if ok then return core end
  local msg = tostring(core)
  local symbol = msg:match("undefined symbol: (luaL?_[%w_]+)")
  if symbol then
    error(M.message(msg:match("from file '([^']+)'") or path, built, "undefined symbol: " .. symbol), 0)
  end
  error(msg, 2)
end

return M
