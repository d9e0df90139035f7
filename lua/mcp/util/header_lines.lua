--- HTTP response header lines ("Name: value", CRLF or LF separated) as a table, as the C
--- transports hand them to Lua: the legacy stream's refused GET (transport/http.lua) and a
--- refused GET or DELETE given to the request hooks (auth/transport.lua).
local M = {}

--- {name (lower case) = value}; a name given more than once gets its values joined with ", ".
---@param text string
---@return table<string, string>
function M.parse(text)
  local hdrs = {}
  for line in text:gmatch("[^\r\n]+") do
    local name, v = line:match("^([^:]+):[ \t]*(.-)[ \t]*$")
    if name then
      name = name:lower()
      hdrs[name] = hdrs[name] and (hdrs[name] .. ", " .. v) or v
    end
  end
  return hdrs
end

return M
