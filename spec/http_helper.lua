-- Helpers for the HTTP specs: start spec/fixtures/http_server.mjs (the project's fault-injecting
-- MCP server over HTTP) and server-everything in its HTTP modes, and talk to their control
-- endpoints with the curl command-line tool. Servers listen on 127.0.0.1 only.
local busted = require("busted")
local mcp = require("mcp")
local helper = require("helper")

local H = {}

local sh = helper.sh

function H.have_node()
  return helper.have_command("node")
end

function H.have_curl()
  return helper.have_command("curl")
end

--- Start a node fixture (spec/fixtures/<script>) with its arguments (a shell string); it prints
--- a JSON line naming its "port" first. Returns {f=, line=, port=, base=, url=} (url: base/mcp).
function H.node_server(script, args)
  local prefix = helper.sanitizer() and "env -u LD_PRELOAD " or ""
  local cmd = ("%snode %s/spec/fixtures/%s %s 2>/dev/null"):format(prefix, helper.root, script, args or "")
  local f = assert(io.popen(cmd, "r"))
  local line = f:read("*l") or ""
  local port = tonumber(line:match('"port"%s*:%s*(%d+)'))
  assert(port, script .. " did not start: " .. line)
  local srv = { f = f, line = line, port = port, base = "http://127.0.0.1:" .. port }
  srv.url = srv.base .. "/mcp"
  return srv
end

--- Start the fault server with extra flags; returns {url=, port=, pid=}.
function H.start(flags)
  local srv = H.node_server("http_server.mjs", "--stdin=ignore --exit-with-parent --quiet " .. (flags or ""))
  srv.pid = H.state(srv).pid
  return srv
end

--- For a describe block: a server that start() starts before the block's tests and stop(srv)
--- stops after them; reset(srv), when given, runs before each test. Returns the server's table,
--- filled in when the block starts.
function H.block_server(start, stop, reset)
  local srv = {}
  busted.setup(function()
    for k, v in pairs(start()) do srv[k] = v end
  end)
  busted.teardown(function() stop(srv) end)
  if reset then busted.before_each(function() reset(srv) end) end
  return srv
end

local function reset(srv)
  H.control(srv, { reset = true })
end

--- The fault server (extra flags) for a describe block (H.block_server), reset before each test
--- unless opts.reset is false; nil, with the block marked pending, when node or curl is missing.
function H.serve(flags, opts)
  if not (H.have_node() and H.have_curl()) then
    busted.pending("node and curl are needed to run the HTTP test server")
    return nil
  end
  return H.block_server(function() return H.start(flags) end, H.stop, not (opts and opts.reset == false) and reset or nil)
end

--- Start spec/fixtures/modern_http.mjs (the 2026-07-28 test server over HTTP) with extra
--- modern_server.lua flags; returns {url=, base=, pid=}. Stop it with H.stop.
function H.start_modern(flags)
  local srv = H.node_server("modern_http.mjs",
    ("--lua=%s --exit-with-parent -- %s </dev/null"):format(helper.lua_cmd(), flags or ""))
  srv.pid = tonumber(srv.line:match('"pid"%s*:%s*(%d+)'))
  return srv
end

--- GET base/path, decoded.
local function get_json(srv, path)
  local out = sh(("curl -s '%s%s'"):format(srv.base, path))
  return (assert(mcp.json.decode(out), "bad state: " .. out))
end
H.get_json = get_json

--- What modern_http.mjs saw: {requests = [{http_method, path, headers, rpc_method, rpc_id, status}], disconnects}.
function H.modern_state(srv)
  return get_json(srv, "/state")
end

function H.stop(srv)
  if srv and srv.pid then helper.kill(srv.pid, "TERM") end
  if srv and srv.f then srv.f:close() end
end

--- POST /control with a table (encoded with the library's own JSON codec).
function H.control(srv, t)
  local body = mcp.json.encode(t):gsub("'", "'\\''")
  local out = sh(("curl -s -X POST -H 'Content-Type: application/json' --data '%s' %s/control"):format(body, srv.base))
  local res = mcp.json.decode(out)
  assert(res and res.ok, "control failed: " .. out)
  return res
end

--- What the fault server recorded (GET /control/state).
function H.state(srv)
  return get_json(srv, "/control/state")
end

--- Start server-everything in "streamableHttp" or "sse" mode on a free port; nil if unavailable.
function H.start_everything(mode)
  return H.start_everything_on(nil, mode)
end

--- The same on a given port (nil: a free one), e.g. to restart it where a client expects it.
function H.start_everything_on(port, mode)
  local bin = os.getenv("MCP_EVERYTHING_SERVER")
  if bin == nil or bin == "" or not H.have_node() then return nil end
  local script = bin:gsub("/node_modules/%.bin/mcp%-server%-everything$", "/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
  -- A free port: ask the kernel through a throwaway listener of the fault server's own kind.
  port = port or tonumber(sh([[node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})']]))
  local prefix = helper.sanitizer() and "env -u LD_PRELOAD " or ""
  local cmd = ("%sPORT=%d node %s %s >/dev/null 2>&1 & echo $!"):format(prefix, port, script, mode)
  local pid = tonumber(sh(cmd))
  local srv = { pid = pid, port = port, base = "http://127.0.0.1:" .. port }
  -- Wait until it accepts connections (bounded).
  for _ = 1, 150 do
    local code = sh(("curl -s -o /dev/null -w '%%{http_code}' %s/ 2>/dev/null"):format(srv.base))
    if code:match("^%d%d%d$") and code ~= "000" then return srv end
    sh("sleep 0.1") -- test set-up only: the server has no readiness signal we can wait on
  end
  helper.kill(pid, "KILL")
  return nil
end

function H.stop_everything(srv)
  if srv and srv.pid then helper.kill(srv.pid, "TERM") end
end

return H
