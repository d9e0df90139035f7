--- Where lua-mcp keeps its files between runs (OAuth tokens, approved tool definitions).
local M = {}

--- The default directory: $XDG_DATA_HOME/lua-mcp, else ~/.local/share/lua-mcp; nil when neither
--- variable gives an absolute path.
---@return string|nil
function M.default_dir()
  local base = os.getenv("XDG_DATA_HOME")
  if base == nil or base == "" or base:sub(1, 1) ~= "/" then
    local home = os.getenv("HOME")
    if home == nil or home == "" then return nil end
    base = home .. "/.local/share"
  end
  return base .. "/lua-mcp"
end

return M
