-- A minimal stdio MCP server for bench/hostloop.lua: `initialize`, and `tools/call` answering a
-- result of N (argv[1], default 40000) small objects in structuredContent (~4 MB for 40,000), or
-- for the tool "text" one text item of 10 MB (lines of text: a "\n" escape every 64 bytes).
-- Anything else that has an id gets -32601. Plain string building, no library.
local n = tonumber(arg[1]) or 40000
local parts = {}
for i = 1, n do
  parts[i] = ('{"i":%d,"name":"item %d","ok":true,"tags":["a","b"],"w":%d.5}'):format(i, i, i % 97)
end
local items = "[" .. table.concat(parts, ",") .. "]"
parts = nil -- luacheck: ignore (freed before the loop)
local text_result

local function text()
  if not text_result then
    local line = ("%-62s\\n"):format("a line of the server's log, as a tool would return it")
    text_result = '{"content":[{"type":"text","text":"' .. line:rep(math.floor(10 * 1024 * 1024 / #line)) .. '"}]}'
  end
  return text_result
end

local function reply(id, result)
  io.stdout:write('{"jsonrpc":"2.0","id":', id, ',"result":', result, "}\n")
  io.stdout:flush()
end

for line in io.stdin:lines() do
  local id = line:match('"id":%s*([^,}]+)')
  local method = line:match('"method":%s*"([^"]+)"')
  if id and method == "initialize" then
    local v = line:match('"protocolVersion":%s*"([^"]+)"') or "2025-06-18"
    reply(id, ('{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"hostloop","version":"1"}}'):format(v))
  elseif id and method == "tools/call" and line:find('"name":"text"', 1, true) then
    reply(id, text())
  elseif id and method == "tools/call" then
    reply(id, '{"content":[{"type":"text","text":"items"}],"structuredContent":{"items":' .. items .. "}}")
  elseif id and method == "tools/list" then
    reply(id, '{"tools":[{"name":"items","inputSchema":{"type":"object"}}]}')
  elseif id and method then
    io.stdout:write('{"jsonrpc":"2.0","id":', id, ',"error":{"code":-32601,"message":"no"}}\n')
    io.stdout:flush()
  end
end
