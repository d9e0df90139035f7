-- Quickstart: start the example server (Lua, stdio), then list its tools, call one, read a
-- resource, get a prompt and ask for a completion. Run with `make demo`.
local mcp = require("mcp")

local here = (arg and arg[0] or ""):match("^(.*)/") or "."
local lua = os.getenv("MCP_DEMO_LUA") or "lua5.4"

local function check(result, err)
  if result == nil then
    io.stderr:write("quickstart: ", tostring(err), "\n")
    os.exit(1)
  end
  return result
end

local client = check(mcp.create_stdio_client(lua, { here .. "/servers/example_server.lua" }, {
  client_name = "lua-mcp-quickstart",
  stderr = "discard",
}))

local info = client:server_info()
print(("connected to %s %s (protocol %s)"):format(info.name, info.version, client:protocol_version()))
print("instructions: " .. client:server_instructions())

print("\n# tools")
for _, tool in ipairs(check(client:list_all_tools())) do
  print(("- %s: %s"):format(tool.name, tool.description or ""))
end

print("\n# call_tool add {a=2, b=40}")
local sum = check(client:call_tool("add", { a = 2, b = 40 }))
print("content:           " .. sum.content[1].text)
print("structuredContent: " .. mcp.json.encode(sum.structuredContent))

print("\n# call_tool slow_count {n=3}, with progress")
local counted = check(client:call_tool("slow_count", { n = 3 }, {
  on_progress = function(p)
    print(("  progress %s/%s %s"):format(p.progress, p.total or "?", p.message or ""))
  end,
}))
print("result: " .. counted.content[1].text)

print("\n# read_resource example://greeting")
local res = check(client:read_resource("example://greeting"))
for _, c in ipairs(res.contents) do
  print(("%s (%s): %s"):format(c.uri, c.mimeType or "?", c.text or "<blob>"))
end

print("\n# get_prompt greet {name=\"Ada\"}")
local prompt = check(client:get_prompt("greet", { name = "Ada" }))
for _, m in ipairs(prompt.messages) do
  print(("%s: %s"):format(m.role, m.content.text))
end

print("\n# complete greet.name \"Al\"")
local done = check(client:complete({
  ref = { type = "ref/prompt", name = "greet" },
  argument = { name = "name", value = "Al" },
}))
print("values: " .. table.concat(done.completion.values, ", "))

client:close()
print("\nclosed; the server process was stopped and reaped")
