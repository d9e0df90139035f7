-- Measurements the hostile specs bound: resident memory, open fds, elapsed time, and a
-- bystander client that must stay unharmed. `local bounds = require("hostile.bounds")`.
local mcp = require("mcp")
local helper = require("helper")

local M = {}

M.server = helper.root .. "/spec/hostile/servers/stdio_server.lua"

--- Resident set size of this process in KiB (VmRSS).
function M.rss_kb()
  local fh = assert(io.open("/proc/self/status", "r"))
  local text = fh:read("*a")
  fh:close()
  return tonumber(text:match("VmRSS:%s*(%d+)"))
end

--- Open fds of this process (a count).
function M.fd_count()
  local fh = assert(io.open("/proc/self/stat", "r"))
  local pid = fh:read("*l"):match("^(%d+)")
  fh:close()
  for _ = 1, 2 do collectgarbage("collect") end -- (handles of files left to the collector)
  -- listed by ls into a file: a pipe from io.popen would be counted too, with its write end while
  -- the parent has not closed it yet (popen closes it after the child's exec: ls may be first)
  local out = os.tmpname()
  local prefix = helper.sanitizer() and "env -u LD_PRELOAD " or ""
  os.execute(("%sls /proc/%s/fd > %s 2>/dev/null"):format(prefix, pid, out))
  local n = 0
  for _ in io.lines(out) do n = n + 1 end
  os.remove(out)
  return n
end

--- A client of the hostile stdio server in mode with extra args.
function M.stdio(mode, args, opts)
  local argv = { M.server, mode }
  for _, a in ipairs(args or {}) do argv[#argv + 1] = tostring(a) end
  local o = { stderr = "discard", request_timeout_ms = helper.ms(30000) }
  for k, v in pairs(opts or {}) do o[k] = v end
  return mcp.create_stdio_client(helper.lua_cmd(), argv, o)
end

--- The bystander: a well-behaved client in the same process, checked after each case.
function M.bystander()
  return M.stdio("plain")
end

--- Assert the bystander still works: one tool call answered "ok".
function M.assert_unharmed(c)
  local res, err = c:call_tool("x", {})
  assert(res, "the bystander client failed: " .. tostring(err))
  assert(res.content[1].text == "ok", "the bystander client got a wrong answer")
end

--- Wait (bounded) until every server process this file started is reaped, so the next spec
--- file starts with none of ours; returns the number still alive.
function M.reap_all(ms)
  -- a client an earlier spec dropped without close() stops its server when it is collected
  collectgarbage()
  collectgarbage()
  helper.wait_until(function() return mcp.core.children() == 0 end, ms or helper.ms(10000))
  return mcp.core.children()
end

--- Milliseconds spent in fn(), and its results packed.
function M.timed(fn)
  local t0 = mcp.core.now_ms()
  local r = { fn() }
  return mcp.core.now_ms() - t0, r
end

-- ---- the hostile HTTP server (spec/hostile/servers/http_server.mjs) --------------------------

local sh = helper.sh

--- Whether node is there to run the HTTP server.
function M.have_node()
  return helper.have_command("node")
end

--- Start the hostile HTTP server: {base=, port=, f=}.
function M.start_http()
  local prefix = helper.sanitizer() and "env -u LD_PRELOAD " or ""
  local f = assert(io.popen(("%snode %s/spec/hostile/servers/http_server.mjs 2>/dev/null"):format(prefix, helper.root), "r"))
  local line = f:read("*l") or ""
  local port = assert(tonumber(line:match('"port"%s*:%s*(%d+)')), "http_server.mjs did not start: " .. line)
  return { f = f, port = port, base = "http://127.0.0.1:" .. port }
end

function M.stop_http(srv)
  if srv == nil then return end
  local st = M.http_state(srv)
  if st and st.pid then helper.kill(st.pid, "TERM") end
  srv.f:close()
end

--- What the server saw: {requests = {{method, path, headers}}, connections, open, pid}.
function M.http_state(srv)
  return mcp.json.decode(sh(("curl -s %s/state"):format(srv.base)))
end

--- A client of the hostile HTTP server in mode.
function M.http(srv, mode, opts)
  local o = { request_timeout_ms = helper.ms(30000) }
  for k, v in pairs(opts or {}) do o[k] = v end
  return mcp.create_http_client(srv.base .. "/" .. mode, o)
end

return M
