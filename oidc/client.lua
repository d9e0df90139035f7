-- One lua-mcp client process of the oidc leg (oidc/oidc_spec.lua runs it for "another process
-- on the same token store"): the interactive provider over a file store, the browser step done
-- by oidc/browser.mjs (or refused with --no-login), calls the tool whoami and prints one JSON
-- line: {ok=, text=, err=, oauth_error=, logins=}.
--
--   lua oidc/client.lua MCP_URL STORE_DIR [--no-login] [--wait-ms=N]
local mcp = require("mcp")
local core = require("mcp.core")

local mcp_url, dir = arg[1], arg[2]
local no_login, wait_ms = false, 0
for i = 3, #arg do
  if arg[i] == "--no-login" then no_login = true end
  wait_ms = tonumber(arg[i]:match("^%-%-wait%-ms=(%d+)$")) or wait_ms
end
local here = arg[0]:match("^(.*)/[^/]*$") or "."

local logins = 0
local p = mcp.auth.interactive_provider({
  client_name = "lua-mcp oidc leg", store = mcp.auth.file_store({ dir = dir }), print = function() end,
  timeout_ms = 30000,
  open = function(u)
    logins = logins + 1
    if not no_login then assert(core.spawn_detached({ "node", here .. "/browser.mjs", u })) end
  end,
})

local function out(t)
  t.logins = logins
  io.write(mcp.json.encode(t), "\n")
end

-- (the processes started together wait out the same access token's life before their call)
local deadline = core.now_ms() + wait_ms
while core.now_ms() < deadline do mcp.loop.step(50) end

local c, err = mcp.create_http_client(mcp_url, { auth_provider = p, request_timeout_ms = 30000 })
if not c then
  out({ ok = false, err = tostring(err), oauth_error = type(err) == "table" and err.oauth_error or nil })
  os.exit(0)
end
local res, cerr = c:call_tool("whoami", {})
c:close()
if not res then
  out({ ok = false, err = tostring(cerr), oauth_error = type(cerr) == "table" and cerr.oauth_error or nil })
else
  out({ ok = true, text = res.content[1].text })
end
