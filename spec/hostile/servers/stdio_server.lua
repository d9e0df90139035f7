-- A hostile MCP server over stdio for spec/hostile/ (no modules needed: runs on lua5.1-5.4 and
-- LuaJIT). It answers initialize and then misbehaves as the first argument says:
--
--   stderr_flood SECONDS   tools/call: 16-byte lines on stderr for SECONDS, then the answer
--   fds                    tools/call: text = the fds open in this process (/proc/self/fd)
--   cursor_forever         tools/list: every page has a new nextCursor
--   inf                    tools/list: a schema with "maximum": 1e400; tools/call:
--                          structuredContent {"x": 1e400} without content
--   ping_flood N           after initialized: N pings, then 5 s without reading stdin
--   oversize BYTES WHERE   tools/call: a response of BYTES bytes; WHERE = first | last (id place)
--   group_helper PIDFILE   at start: a `sleep` helper in our process group, its pid in PIDFILE;
--                          exits on stdin EOF, leaving the helper behind
--   framing                tools/call: garbage first (not JSON, a NUL byte, 100000 nested [,
--                          invalid UTF-8, an unknown id, a JSON array), then the answer with CRLF,
--                          written in two pieces
--   exit_midline           tools/call: half a response, then exit(0)
--   stubborn               after stdin EOF: stays alive 30 s (run it with SIGTERM ignored)
local mode = arg[1] or "fds"
local out, err = io.stdout, io.stderr

local function send(s)
  out:write(s, "\n")
  out:flush()
end

local function id_of(line)
  return line:match('"id"%s*:%s*(%d+)') or line:match('"id"%s*:%s*("[^"]*")')
end

local function result(id, body)
  send('{"jsonrpc":"2.0","id":' .. id .. ',"result":' .. body .. '}')
end

local function text(id, s)
  result(id, '{"content":[{"type":"text","text":"' .. s .. '"}]}')
end

if mode == "group_helper" then
  os.execute("sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > " .. arg[2])
end

local cursor = 0
while true do
  local line = io.read("*l")
  if line == nil then break end
  local method = line:match('"method"%s*:%s*"([^"]*)"')
  local id = id_of(line)
  if method == "initialize" then
    result(id, '{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},' ..
      '"serverInfo":{"name":"hostile-' .. mode .. '","version":"1"}}')
  elseif method == "notifications/initialized" and mode == "ping_flood" then
    for i = 1, tonumber(arg[2]) do
      out:write('{"jsonrpc":"2.0","id":"p', i, '","method":"ping"}\n')
    end
    out:flush()
    os.execute("sleep 5")
  elseif method == "tools/list" and id then
    if mode == "cursor_forever" then
      cursor = cursor + 1
      result(id, '{"tools":[{"name":"t' .. cursor .. '","inputSchema":{"type":"object"}}],' ..
        '"nextCursor":"c' .. cursor .. '"}')
    elseif mode == "inf" then
      result(id, '{"tools":[{"name":"big","inputSchema":{"type":"object","properties":' ..
        '{"n":{"type":"number","maximum":1e400}}}}]}')
    else
      result(id, '{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}')
    end
  elseif method == "tools/call" and id then
    if mode == "stderr_flood" then
      local stop = os.time() + tonumber(arg[2])
      local chunk = string.rep("stderr flood 12\n", 256)
      while os.time() < stop do err:write(chunk) end
      text(id, "flooded")
    elseif mode == "fds" then
      -- Our own pid (the shell of io.popen is another process), then every fd and its target.
      local fh = io.open("/proc/self/stat", "r")
      local pid = fh:read("*l"):match("^(%d+)")
      fh:close()
      -- os.execute, not io.popen: popen's pipe is open in this process while the shell lists it,
      -- and its write end closes only once the shell runs (a race under ASan).
      local tmp = os.tmpname()
      os.execute("cd /proc/" .. pid .. "/fd && for f in *; do echo \"$f=$(readlink $f)\"; done > " .. tmp)
      local fds = {}
      for l in io.lines(tmp) do fds[#fds + 1] = l end
      os.remove(tmp)
      text(id, table.concat(fds, ";"))
    elseif mode == "inf" then
      result(id, '{"structuredContent":{"x":1e400}}')
    elseif mode == "framing" then
      out:write("not json at all\n", "{\"a\":\0}\n", string.rep("[", 100000), "\n",
        '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"\255\254"}}\n',
        '{"jsonrpc":"2.0","id":987654,"result":{}}\n', "[1,2,3]\n", "\r\n")
      local answer = '{"jsonrpc":"2.0","id":' .. id .. ',"result":{"content":[{"type":"text","text":"ok"}]}}\r\n'
      out:write(answer:sub(1, 20))
      out:flush()
      os.execute("sleep 0.2")
      out:write(answer:sub(21))
      out:flush()
    elseif mode == "exit_midline" then
      out:write('{"jsonrpc":"2.0","id":' .. id .. ',"result":{"content":[{"ty')
      out:flush()
      os.exit(0)
    elseif mode == "oversize" then
      local pad = string.rep("x", tonumber(arg[2]))
      if arg[3] == "last" then
        send('{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"' .. pad .. '"}]},"id":' .. id .. '}')
      else
        text(id, pad)
      end
    else
      text(id, "ok")
    end
  elseif id and method then
    result(id, "{}")
  end
end
if mode == "stubborn" then os.execute("sleep 30") end
