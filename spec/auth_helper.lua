-- Helpers for the OAuth specs: start the project's OAuth fixtures (spec/fixtures/oauth_server.mjs,
-- an MCP server and its authorization server on one loopback port; oauth_ext_server.mjs, the
-- extensions' authorization server), steer and read them through their control endpoints with the
-- library's own mcp.http_request, and make the providers and clients the specs use.
local busted = require("busted")
local luassert = require("luassert")
local mcp = require("mcp")
local helper = require("helper")
local H = require("http_helper")

local A = {}

--- Whether the fixtures can run (they need node).
A.available = H.have_node()

--- Start oauth_server.mjs with extra flags; returns {f=, port=, base=, url=}. Stop it with A.stop.
function A.start(flags)
  return H.node_server("oauth_server.mjs", "--stdin=ignore --exit-with-parent --quiet " .. (flags or ""))
end

--- Start oauth_ext_server.mjs with extra flags, the same way.
function A.start_ext(flags)
  return H.node_server("oauth_ext_server.mjs", "--exit-with-parent " .. (flags or ""))
end

--- What the fixture recorded: {pid, records = {...}, ...} (GET /control/state).
function A.state(srv)
  local res = assert(mcp.http_request({ url = srv.base .. "/control/state" }))
  return (assert(mcp.json.decode(res.body)))
end

--- POST /control with a table; the fixture must answer 200.
function A.control(srv, t)
  local res = assert(mcp.http_request({ url = srv.base .. "/control", json = t }))
  luassert.equal(200, res.status, res.body)
end

function A.stop(srv)
  local res = mcp.http_request({ url = srv.base .. "/control/state" })
  local st = res and mcp.json.decode(res.body)
  if st and st.pid then helper.kill(st.pid, "TERM") end
  srv.f:close()
end

local function reset(srv)
  A.control(srv, { reset = true })
end

--- oauth_server.mjs for a describe block (http_helper's block_server), reset before each test
--- unless opts.reset is false; nil, with the block marked pending, when node (or, with opts.curl,
--- curl) is missing. opts.flags: the fixture's extra flags.
function A.serve(opts)
  opts = opts or {}
  if not A.available or (opts.curl and not H.have_curl()) then
    busted.pending(opts.curl and "node and curl are needed to run the OAuth fixture"
      or "node is needed to run the OAuth fixture")
    return nil
  end
  return H.block_server(function() return A.start(opts.flags) end, A.stop, opts.reset ~= false and reset or nil)
end

--- A headless provider for the fixture (client_name "auth-spec"), with extra options.
function A.provider(srv, extra)
  local o = { redirect_url = "http://127.0.0.1:9/callback", client_name = "auth-spec", server_url = srv and srv.url }
  for k, v in pairs(extra or {}) do o[k] = v end
  return mcp.auth.headless_provider(o)
end

--- An interactive provider whose login runs without a browser (follow_authorization), counted in
--- p.logins; extra options over a memory store's.
function A.counting_provider(extra)
  local p
  local o = { store = mcp.auth.memory_store(), headless = function(u)
    p.logins = p.logins + 1
    return mcp.auth.follow_authorization(u)
  end }
  for k, v in pairs(extra or {}) do o[k] = v end
  p = mcp.auth.interactive_provider(o)
  p.logins = 0
  return p
end

-- The options of a test client: a 20 s request timeout (scaled under sanitizers), client_name
-- "auth-spec", then each table given (nil skipped), later over earlier.
local function client_options(...)
  local o = { request_timeout_ms = helper.ms(20000), client_name = "auth-spec" }
  for i = 1, select("#", ...) do
    for k, v in pairs(select(i, ...) or {}) do o[k] = v end
  end
  return o
end

--- A streamable HTTP client of the fixture's MCP endpoint (options as client_options):
--- mcp.create_http_client's results.
function A.http_client(srv, ...)
  return mcp.create_http_client(srv.url, client_options(...))
end

--- A legacy SSE client of the fixture's /sse endpoint: mcp.create_sse_client's results.
function A.sse_client(srv, ...)
  return mcp.create_sse_client(srv.base .. "/sse", client_options(...))
end

return A
