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
--- An object whose metatable has a `__keyorder` list (as `decode` with `key_order` makes) writes
--- the listed keys first, in that order, then any others.
---@param v any
---@return string
function M.encode(v)
  return core.json_encode(v)
end

--- Decode JSON text; returns nil, message on invalid input. With `opts.key_order`, every object
--- with members keeps the order of its keys in its metatable
--- (`{__jsontype = "object", __keyorder = {key, ...}}`, each key once), so `encode` writes them in
--- that order again; off by default (plain tables, the fast path). Without it only the value of a
--- `"properties"` key (a JSON Schema's) keeps its order.
---@param s string
---@param opts {key_order: boolean|nil}|nil
---@return any, string|nil
function M.decode(s, opts)
  if opts ~= nil and type(opts) ~= "table" then error("mcp.json.decode: opts must be a table", 2) end
  return core.json_decode(s, opts ~= nil and opts.key_order == true)
end

--- Make another value (Neovim's vim.NIL, say) encode as JSON null too; nil clears it.
---@param v any
function M.set_null_alias(v)
  core.json_null_alias(v)
end

return M
