--- Tool parameter headers (x-mcp-header, MCP 2026-07-28 / SEP-2243): a tool's input schema can
--- bind a property to an `Mcp-Param-<Name>` HTTP header. These are the reference's pure helpers
--- (GetMCPToolHeaderBindings, CreateMCPToolHeaders, EncodeMCPHeaderValue); the transport applies
--- them once the 2026-07-28 lifecycle is in place.
local core = require("mcp.core")
local errors = require("mcp.errors")
local schema = require("mcp.schema")

local M = {}

M.VALUE_STRING = "string"
M.VALUE_INTEGER = "integer"
M.VALUE_BOOLEAN = "boolean"

local MAX_SAFE_INTEGER = 9007199254740991 -- 2^53 - 1, as JavaScript's Number.isSafeInteger
local TOKEN = "^[!#$%%&'*+%-.^_`|~0-9A-Za-z]+$"

local function fail(message)
  return nil, errors.new(nil, message, nil, { kind = "validation" })
end

local sorted_keys = schema.sorted_keys

local function is_object(v)
  local k = schema.kind(v)
  return k == "object" or k == "empty"
end

local function copy_path(path, name)
  local p = {}
  for i = 1, #path do p[i] = path[i] end
  if name ~= nil then p[#p + 1] = name end
  return p
end

-- Walk every object-valued node; a property is statically reachable only through a chain of
-- `properties` maps from the root. Arrays (allOf, anyOf, tuple items...) are not walked, so an
-- annotation inside one is ignored, as in the reference.
local function walk(node, path, reachable, state)
  local name = node["x-mcp-header"]
  if name ~= nil then
    if not reachable or #path == 0 then return fail("x-mcp-header is not on a statically reachable property") end
    if type(name) ~= "string" or not name:match(TOKEN) then return fail("x-mcp-header must be a non-empty HTTP token") end
    local lower = name:lower()
    if state.seen[lower] then return fail(('x-mcp-header value "%s" is not unique'):format(name)) end
    state.seen[lower] = true
    local t = node.type
    if t ~= M.VALUE_STRING and t ~= M.VALUE_INTEGER and t ~= M.VALUE_BOOLEAN then
      return fail("x-mcp-header can only annotate boolean, integer, or string properties")
    end
    state.bindings[#state.bindings + 1] = { header_name = name, path = copy_path(path), value_type = t }
  end
  for _, key in ipairs(sorted_keys(node)) do
    local child = node[key]
    if key == "properties" and is_object(child) then
      for _, prop in ipairs(sorted_keys(child)) do
        if is_object(child[prop]) then
          local ok, err = walk(child[prop], copy_path(path, prop), reachable, state)
          if not ok then return nil, err end
        end
      end
    elseif key ~= "x-mcp-header" and is_object(child) then
      local ok, err = walk(child, path, false, state)
      if not ok then return nil, err end
    end
  end
  return true
end

--- The header bindings of a tool's input schema (GetMCPToolHeaderBindings), sorted by path.
--- Each binding: {header_name=, path={...}, value_type="string"|"integer"|"boolean"}.
---@param input_schema table
---@return table[]|nil bindings, mcp.Error|nil err
function M.get_tool_header_bindings(input_schema)
  if not is_object(input_schema) then return fail("inputSchema must be a JSON Schema object") end
  local state = { bindings = {}, seen = {} }
  local ok, err = walk(input_schema, {}, true, state)
  if not ok then return nil, err end
  table.sort(state.bindings, function(a, b) return table.concat(a.path, ".") < table.concat(b.path, ".") end)
  return state.bindings
end

--- A header value as sent (EncodeMCPHeaderValue): plain printable ASCII without surrounding
--- whitespace passes through; anything else becomes =?base64?<base64 of the UTF-8 bytes>?=.
---@param value string
---@return string
function M.encode_header_value(value)
  if type(value) ~= "string" then error("mcp.encode_header_value: string expected", 2) end
  local plain = not value:find("[^\t\32-\126]")
    and not value:find("^[ \t]") and not value:find("[ \t]$")
    and not value:find("^=%?base64%?.*%?=$")
  if plain then return value end
  return "=?base64?" .. core.base64_encode(value) .. "?="
end

local function header_text(value, value_type)
  if value_type == M.VALUE_STRING and type(value) == "string" then return value end
  if value_type == M.VALUE_BOOLEAN and type(value) == "boolean" then return tostring(value) end
  if value_type == M.VALUE_INTEGER and type(value) == "number" and value == math.floor(value)
      and value >= -MAX_SAFE_INTEGER and value <= MAX_SAFE_INTEGER then
    return string.format("%.0f", value)
  end
  return nil
end

--- The Mcp-Param-* headers for one call (CreateMCPToolHeaders): {["Mcp-Param-Name"] = value}.
--- An absent or null argument sends no header; a value of the wrong type is an error.
---@param bindings table[]
---@param args table|nil
---@return table|nil headers, mcp.Error|nil err
function M.create_tool_headers(bindings, args)
  local headers = {}
  for _, b in ipairs(bindings) do
    local v = args
    for _, seg in ipairs(b.path) do
      if type(v) == "table" then v = v[seg] else v = nil end -- (false must survive the walk)
    end
    if v ~= nil and v ~= core.null then
      local text = header_text(v, b.value_type)
      if text == nil then
        return fail(('Tool argument "%s" does not match its x-mcp-header type'):format(table.concat(b.path, ".")))
      end
      headers["Mcp-Param-" .. b.header_name] = M.encode_header_value(text)
    end
  end
  return headers
end

return M
