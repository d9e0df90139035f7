--- JSON helpers over the core's exact codec (integers to 2^53 exact on every Lua, [] kept).
local core = require("mcp.core")

local M = {}

--- JSON null: a light userdata equal to cjson.null.
M.null = core.null

--- Mark a table as a JSON array, so that an empty one encodes as [].
---@generic T: table
---@param t T|nil
---@return T
function M.array(t)
  return setmetatable(t or {}, core.array_mt)
end

--- Mark a table as a JSON object, so that an empty one encodes as {}.
---@generic T: table
---@param t T|nil
---@return T
function M.object(t)
  return setmetatable(t or {}, core.object_mt)
end

---@param t any
---@return boolean
function M.is_array(t)
  return type(t) == "table" and getmetatable(t) == core.array_mt
end

--- Encode a Lua value; raises on a value JSON cannot hold (a function, a sparse array, NaN).
---@param v any
---@return string
function M.encode(v)
  return core.json_encode(v)
end

--- Decode JSON text; returns nil, message on invalid input.
---@param s string
---@return any, string|nil
function M.decode(s)
  return core.json_decode(s)
end

--- Make another value (Neovim's vim.NIL, say) encode as JSON null too; nil clears it.
---@param v any
function M.set_null_alias(v)
  core.json_null_alias(v)
end

return M
