-- Headless Neovim spec of the example plugin (examples/nvim), run by `make test-nvim`.
-- It writes an mcpServers config, then drives :McpConnect, :McpTools and :McpCall against
-- examples/servers/example_server.lua, with vim.ui and vim.notify replaced by scripted stand-ins.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local T = dofile(root .. "/spec/nvim/harness.lua")
local slow = T.slow()
vim.opt.runtimepath:append(root .. "/examples/nvim")

local server_lua = os.getenv("MCP_TEST_LUA")
if server_lua == nil or server_lua == "" then server_lua = "lua5.4" end

-- vim.notify and vim.ui stand-ins
local notes = {}
-- returns a record, as nvim-notify does, so that `replace` can be checked
vim.notify = function(msg, level, opts)
  local rec = { n = #notes + 1 }
  notes[#notes + 1] = { msg = tostring(msg), level = level, opts = opts, record = rec }
  return rec
end
local ui_log = {}
vim.ui.select = function(items, opts, cb)
  ui_log[#ui_log + 1] = "select: " .. tostring(opts.prompt)
  vim.defer_fn(function() cb(items[1], 1) end, 20) -- "Answer", answered later as a person would
end
vim.ui.input = function(opts, cb)
  ui_log[#ui_log + 1] = "input: " .. tostring(opts.prompt) .. " [" .. tostring(opts.default) .. "]"
  vim.defer_fn(function() cb("typed in nvim") end, 20)
end

local function noted(pattern)
  for _, n in ipairs(notes) do
    if n.msg:find(pattern) then return n end
  end
end

local function buffer_text(name)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then return nil end
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

local config = vim.fn.tempname() .. ".json"
do
  local fh = assert(io.open(config, "wb"))
  fh:write(([[{
  "mcpServers": {
    "example": { "command": %q, "args": [%q], "env": { "EXAMPLE_VAR": "1" } },
    "nothing": { "args": [] },
    "missing": { "command": "/nonexistent/mcp-server" }
  }
}]]):format(server_lua, root .. "/examples/servers/example_server.lua"))
  fh:close()
end

local plugin
T.test("setup defines the commands", function()
  plugin = require("mcp_example").setup({ config_file = config, request_timeout_ms = 30000 * slow })
  for _, c in ipairs({ "McpConnect", "McpDisconnect", "McpTools", "McpCall" }) do
    T.eq(2, vim.fn.exists(":" .. c), ":" .. c)
  end
  local names = vim.fn.getcompletion("McpConnect ", "cmdline")
  T.eq("example,missing,nothing", table.concat(names, ","), "server names complete")
end)

T.test(":McpConnect example", function()
  vim.cmd("McpConnect example")
  T.wait_for(function() return noted("connected to example") end, 15000 * slow, "the connected notification")
  T.truthy(noted("lua%-example%-server"), "server name shown")
  T.eq("example", plugin.current)
  T.truthy(plugin.clients.example:is_connected())
end)

T.test(":McpConnect reports bad entries", function()
  vim.cmd("McpConnect nothing")
  T.wait_for(function() return noted("neither \"command\" nor \"url\"") end, 5000 * slow, "the error")
  vim.cmd("McpConnect nosuch")
  T.wait_for(function() return noted("no server named \"nosuch\"") end, 5000 * slow, "the error")
  vim.cmd("McpConnect missing")
  T.wait_for(function() return noted("missing: ") end, 15000 * slow, "the spawn failure")
  T.eq("example", plugin.current, "the current server is unchanged")
end)

T.test(":McpTools lists the tools in a scratch buffer", function()
  vim.cmd("McpTools")
  T.wait_for(function() return buffer_text("mcp://example/tools") end, 5000 * slow, "the buffer")
  local text = buffer_text("mcp://example/tools")
  for _, n in ipairs({ "- echo", "- add", "- slow_count", "- ask_user", "message: string" }) do
    T.truthy(text:find(n, 1, true), n .. " in:\n" .. text)
  end
  T.eq("nofile", vim.bo[vim.fn.bufnr("mcp://example/tools")].buftype)
  local tools = vim.fn.getcompletion("McpCall sl", "cmdline")
  T.eq("slow_count", tools[1], "tool names complete")
end)

T.test(":McpCall echo {json}: the result in a scratch buffer", function()
  vim.cmd([[McpCall echo {"message": "hello from :McpCall"}]])
  T.wait_for(function() return buffer_text("mcp://example/echo") end, 5000 * slow, "the buffer")
  T.truthy(buffer_text("mcp://example/echo"):find("hello from :McpCall", 1, true))
end)

T.test(":McpCall add shows structuredContent as JSON", function()
  vim.cmd([[McpCall add {"a": 2, "b": 40}]])
  T.wait_for(function() return buffer_text("mcp://example/add") end, 5000 * slow, "the buffer")
  local text = buffer_text("mcp://example/add")
  T.truthy(text:find('"sum": 42', 1, true), text)
end)

T.test(":McpCall slow_count: progress as one notification updated in place, closed at the end", function()
  local n0 = #notes
  vim.cmd([[McpCall slow_count {"n": 5}]])
  T.wait_for(function() return buffer_text("mcp://example/slow_count") end, 5000 * slow, "the buffer")
  T.truthy(buffer_text("mcp://example/slow_count"):find("Counted to 5", 1, true))
  local mine = {}
  for i = n0 + 1, #notes do
    if notes[i].msg:find("^MCP: slow_count: ") then mine[#mine + 1] = notes[i] end
  end
  T.eq(6, #mine, "five updates and the end")
  local id = mine[1].opts.id
  T.truthy(id, "an id")
  for i, n in ipairs(mine) do
    T.eq(id, n.opts.id, "the same notification")
    if i > 1 then T.eq(mine[i - 1].record, n.opts.replace, "replaces the previous one") end
    if i <= 5 then
      T.truthy(n.msg:find("slow_count: " .. i .. "/5", 1, true), n.msg)
      T.eq(false, n.opts.timeout, "stays while the call runs")
      T.eq(true, n.opts.hide_from_history)
    end
  end
  T.eq("MCP: slow_count: done", mine[6].msg)
  T.eq(nil, mine[6].opts.timeout, "the end closes with the notifier's timeout")
  T.eq(false, mine[6].opts.hide_from_history)
end)

T.test(":McpCall ask_user: elicitation through vim.ui.select and vim.ui.input", function()
  vim.cmd([[McpCall ask_user {"question": "Proceed?"}]])
  T.wait_for(function() return buffer_text("mcp://example/ask_user") end, 10000 * slow, "the buffer")
  local text = buffer_text("mcp://example/ask_user")
  T.truthy(text:find("action: accept", 1, true), text)
  T.truthy(text:find("typed in nvim", 1, true), text)
  T.truthy(ui_log[1] and ui_log[1]:find("Proceed?", 1, true), tostring(ui_log[1]))
  T.truthy(ui_log[2] and ui_log[2]:find("[yes]", 1, true), "the schema default offered: " .. tostring(ui_log[2]))
end)

T.test(":McpCall with bad JSON or an unknown tool reports the error", function()
  vim.cmd([[McpCall echo {not json]])
  T.truthy(noted("must be a JSON object"))
  vim.cmd([[McpCall no_such_tool {}]])
  T.wait_for(function() return noted("no_such_tool: ") end, 5000 * slow, "the error")
end)

T.test(":McpDisconnect closes the connection", function()
  local c = plugin.clients.example
  vim.cmd("McpDisconnect")
  T.wait_for(function() return noted("disconnected from example") end, 5000 * slow, "the notification")
  T.eq(false, c:is_connected())
  T.eq(nil, plugin.current)
  T.wait_for(function() return require("mcp").core.children() == 0 end, 10000 * slow, "the server reaped")
end)

os.remove(config)
T.finish()
