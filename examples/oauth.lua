--- Log in to an OAuth-protected MCP server and call a tool.
---
---   lua5.4 examples/oauth.lua <server-url> [--headless]
---
--- The first run registers the client, opens the authorization URL in your browser (xdg-open or
--- open; the URL is printed too) and waits for the redirect on 127.0.0.1; the tokens are kept in
--- $XDG_DATA_HOME/lua-mcp (mode 0600), so later runs start authorized (refreshing when needed).
--- --headless skips the browser: it follows the authorization URL itself, which works with
--- servers that approve at once, such as the project's fixture:
---
---   node spec/fixtures/oauth_server.mjs &      # prints {"port": N}
---   lua5.4 examples/oauth.lua http://127.0.0.1:N/mcp --headless
local mcp = require("mcp")

local url, headless = nil, false
for _, a in ipairs(arg) do
  if a == "--headless" then headless = true else url = a end
end
if not url then
  io.stderr:write("usage: oauth.lua <server-url> [--headless]\n")
  os.exit(2)
end

local provider = mcp.auth.interactive_provider({
  client_name = "lua-mcp example",
  server_url = url,
  headless = headless and mcp.auth.follow_authorization or nil,
})

local client, err = mcp.create_http_client(url, { auth_provider = provider })
if not client then
  io.stderr:write("connect failed: ", tostring(err), "\n")
  os.exit(1)
end

local tools = assert(client:list_tools())
for _, t in ipairs(tools) do print("tool: " .. t.name) end
if tools[1] then
  local res = assert(client:call_tool(tools[1].name, {}))
  for _, c in ipairs(res.content) do
    if c.type == "text" then print(tools[1].name .. ": " .. c.text) end
  end
end
client:close()
