--- Roots ergonomics: file:// roots from paths, and the client's roots/list handler, which checks
--- the roots (from on_roots_list or set_roots) before they go to the server.
---
---   client:set_roots({ mcp.roots.file_root("/home/me/project", "project") })  -- notifies list_changed
local errors = require("mcp.errors")
local json = require("mcp.json")

local M = {}

local function pct(s)
  return (s:gsub("[^%w%-._~/]", function(c) return string.format("%%%02X", c:byte()) end))
end

--- A root for a local directory: {uri = "file://<absolute path, percent-encoded>", name = name}.
---@param path string an absolute path
---@param name string|nil
---@return table
function M.file_root(path, name)
  if type(path) ~= "string" or path:sub(1, 1) ~= "/" then
    error("mcp.roots.file_root: an absolute path expected", 2)
  end
  return { uri = "file://" .. pct(path), name = name }
end

local function bad(msg, data)
  return nil, errors.new(errors.ERROR_CODES.INTERNAL_ERROR, msg, data, { kind = "handler", method = "roots/list" })
end

--- Check roots: an array of {uri = "file://...", name = string|nil}; a plain string is taken as
--- a URI (or an absolute path).
---@param roots any
---@return table|nil list, mcp.Error|nil err
function M.check(roots)
  if type(roots) ~= "table" then return bad("roots must be an array, got " .. type(roots)) end
  local list = json.array()
  for i, r in ipairs(roots) do
    if type(r) == "string" then
      r = r:sub(1, 1) == "/" and M.file_root(r) or { uri = r }
    end
    if type(r) ~= "table" or type(r.uri) ~= "string" or r.uri:sub(1, 7) ~= "file://" then
      return bad("root " .. i .. " needs a file:// uri", r)
    end
    if r.name ~= nil and type(r.name) ~= "string" then return bad("root " .. i .. ": name must be a string", r) end
    list[i] = r
  end
  return list
end

--- The client's roots/list handler: roots from the on_roots_list handler, else from set_roots.
---@param client mcp.Client
---@return table|nil result, mcp.Error|nil err
function M.handle(client)
  local roots, err
  local handler = client:_handler("roots")
  if handler then
    roots, err = handler()
    if roots == nil then return nil, err end
  else
    roots = client:_roots()
  end
  local list
  list, err = M.check(roots)
  if list == nil then return nil, err end
  return { roots = list }
end

return M
