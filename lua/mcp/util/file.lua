--- Whole-file reads shared by the configuration loader and its writer.
local M = {}

--- The bytes of the file at path.
---@param path string
---@return string|nil text
---@return string|nil err io.open's message
function M.read(path)
  local fh, err = io.open(path, "rb")
  if not fh then return nil, err end
  local text = fh:read("*a")
  fh:close()
  return text
end

return M
