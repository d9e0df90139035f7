-- Headless Neovim spec of the plugin (plugin/mcp.lua, lua/mcp/nvim/plugin.lua), run by
-- `make test-nvim`. A user file (mcpServers, trusted) and a workspace .vscode/mcp.json with
-- comments, ${env:...} and ${input:...} (asked about through the trust prompt) start
-- examples/servers/example_server.lua; the commands run with vim.ui and vim.notify scripted.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local T = dofile(root .. "/spec/nvim/harness.lua")
local slow = T.slow()

local server_lua = os.getenv("MCP_TEST_LUA")
if server_lua == nil or server_lua == "" then server_lua = "lua5.4" end
local server = root .. "/examples/servers/example_server.lua"

-- vim.notify and vim.ui stand-ins
local notes = {}
vim.notify = function(msg, level, opts)
  local rec = { n = #notes + 1 }
  notes[#notes + 1] = { msg = tostring(msg), level = level, opts = opts, record = rec }
  return rec
end
local ui_log = {}
-- answers for vim.ui.select by prompt pattern (first match wins; default: the first item)
local answers = {}
vim.ui.select = function(items, opts, cb)
  ui_log[#ui_log + 1] = "select: " .. tostring(opts.prompt)
  local pick = 1
  for _, a in ipairs(answers) do
    if tostring(opts.prompt):find(a[1]) then pick = a[2] break end
  end
  vim.defer_fn(function() cb(items[pick], pick) end, 20) -- answered later, as a person would
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
local function asked(pattern, init, plain)
  local n = 0
  for _, l in ipairs(ui_log) do if l:find(pattern, init, plain) then n = n + 1 end end
  return n
end

local function buffer_text(name)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then return nil end
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

local function write(path, text)
  local fh = assert(io.open(path, "wb"))
  fh:write(text)
  fh:close()
end

local tmp = vim.fn.tempname()
vim.fn.mkdir(tmp .. "/ws/.vscode", "p")
vim.env.XDG_DATA_HOME = tmp .. "/data" -- the default tool pins go under stdpath("data")
local user_file = tmp .. "/servers.json"
write(user_file, ([[{
  // my servers (mcphub's servers.json format); this comment survives the plugin's writes
  "mcpServers": {
    "example": { "command": %q, "args": [%q], "env": { "EXAMPLE_VAR": "1" }, "autoApprove": ["slow_count"] },
    "off": { "command": %q, "args": [%q], "disabled": true }
  }
}]]):format(server_lua, server, server_lua, server))
-- A workspace file: comments, a trailing comma, ${env:HOME} (allowed in an untrusted file) and an
-- ${input:...} the plugin asks for (both checked in the hub's interpolated entry).
write(tmp .. "/ws/.vscode/mcp.json", ([[{
  // a workspace server
  "inputs": [ { "id": "token", "type": "promptString", "description": "API token", "password": true } ],
  "servers": {
    "ws": { "type": "stdio", "command": %q, "args": [%q],
            "env": { "WS_HOME": "${env:HOME}", "WS_TOKEN": "${input:token}", }, "autoApprove": ["echo"], },
  },
}]]):format(server_lua, server))
vim.cmd("cd " .. vim.fn.fnameescape(tmp .. "/ws"))

local inputs = {}
local plugin
T.test("plugin/mcp.lua defines the commands on the runtimepath", function()
  vim.cmd("runtime plugin/mcp.lua")
  for _, c in ipairs({ "Mcp", "McpCall", "McpRead", "McpPrompt", "McpRestart", "McpEnable", "McpDisable", "McpLogin", "McpLogout" }) do
    T.eq(2, vim.fn.exists(":" .. c), ":" .. c)
  end
  plugin = require("mcp.nvim.plugin").setup({
    config_file = user_file, request_timeout_ms = 30000 * slow,
    on_input = function(input) inputs[#inputs + 1] = input; return "s3cret" end,
    hub = { trust_dir = tmp .. "/trust" },
  })
end)

T.test("the trust prompt's first item, the one Enter takes in most pickers, is No", function()
  answers = {}
  local hook = require("mcp.nvim.ui").trust_hook()
  T.eq(false, hook({ name = "x", type = "stdio", command = "c", args = {} }, "/ws/.mcp.json"))
  answers = { { "wants to run", 3 } }
  T.eq(true, hook({ name = "x", type = "stdio", command = "c", args = {} }, "/ws/.mcp.json"))
  ui_log = {}
end)

T.test("servers start from the user file and, after the trust prompt, the workspace file", function()
  answers = { { "wants to run", 2 } } -- "Once"
  plugin.wait(20000 * slow)
  T.eq(2, #plugin.hubs, "one hub per file")
  T.eq(1, asked("wants to run"), "the workspace server was asked about once")
  T.eq(1, asked("; env: WS_HOME=${env:HOME}; env: WS_TOKEN=${input:token}. Start it?", 1, true),
    "the prompt shows the env the file sets, as written")
  T.eq(0, asked("servers.json"), "the user's file is trusted")
  T.eq("ready", plugin.hubs[1].hub:state("example"))
  T.eq("disabled", plugin.hubs[1].hub:state("off"))
  T.eq("ready", plugin.hubs[2].hub:state("ws"))
  T.eq(true, plugin.hubs[1].hub:client("example").handler_caps.elicitation_url,
    "the default elicitation handler takes URL mode: declared")
  T.eq(1, #inputs, "${input:token} asked")
  T.eq("token", inputs[1].id)
  local spec = plugin.hubs[2].hub.config.servers.ws
  T.eq("s3cret", spec.env.WS_TOKEN, "${input:...} filled in")
  T.eq(os.getenv("HOME"), spec.env.WS_HOME, "${env:HOME} filled in")
end)

T.test("statusline counts the servers", function()
  T.eq("MCP 2/2", plugin.statusline())
end)

T.test(":Mcp shows the servers window", function()
  vim.cmd("Mcp")
  local text = T.truthy(buffer_text("mcp://servers"), "the buffer")
  for _, s in ipairs({ "example  [ready]", "off  [disabled]", "ws  [ready]", "tool    example__echo",
    "resource example://greeting", "prompt  example__greet", "recent log" }) do
    T.truthy(text:find(s, 1, true), s .. " in:\n" .. text)
  end
end)

T.test("completion of tools, resources, prompts and servers", function()
  T.eq("example__slow_count", vim.fn.getcompletion("McpCall example__sl", "cmdline")[1])
  T.eq("example://greeting", vim.fn.getcompletion("McpRead example://gr", "cmdline")[1])
  T.eq("example__greet", vim.fn.getcompletion("McpPrompt example__gr", "cmdline")[1])
  T.eq("ws", table.concat(vim.fn.getcompletion("McpRestart w", "cmdline"), ","))
end)

T.test(":McpCall asks first: allow once", function()
  answers = { { "Run tool echo", 1 } }
  local n0 = asked("Run tool echo")
  vim.cmd([[McpCall example__echo {"message": "hello from :McpCall"}]])
  T.wait_for(function() return buffer_text("mcp://call/example__echo") end, 10000 * slow, "the buffer")
  T.truthy(buffer_text("mcp://call/example__echo"):find("hello from :McpCall", 1, true))
  T.eq(n0 + 1, asked("Run tool echo"), "asked once")
end)

T.test(":McpCall denied: the tool does not run", function()
  answers = { { "Run tool add", 3 } }
  vim.cmd([[McpCall example__add {"a": 2, "b": 40}]])
  T.wait_for(function() return noted("example__add: .*denied") end, 10000 * slow, "the denial")
  T.eq(nil, buffer_text("mcp://call/example__add"))
end)

T.test(":McpCall always: asked no more for that tool", function()
  answers = { { "Run tool add", 2 } }
  local n0 = asked("Run tool add")
  vim.cmd([[McpCall example__add {"a": 2, "b": 40}]])
  T.wait_for(function() return buffer_text("mcp://call/example__add") end, 10000 * slow, "the buffer")
  T.truthy(buffer_text("mcp://call/example__add"):find('"sum": 42', 1, true))
  vim.cmd([[McpCall example__add {"a": 1, "b": 1}]])
  T.wait_for(function() return (buffer_text("mcp://call/example__add") or ""):find('"sum": 2', 1, true) end,
    10000 * slow, "the second result")
  T.eq(n0 + 1, asked("Run tool add"), "asked once for both calls")
end)

T.test(":McpCall slow_count: progress in one notification updated in place", function()
  answers = { { "Run tool", 2 } }
  local n0 = #notes
  vim.cmd([[McpCall example__slow_count {"n": 3}]])
  T.wait_for(function() return buffer_text("mcp://call/example__slow_count") end, 10000 * slow, "the buffer")
  local mine = {}
  for i = n0 + 1, #notes do
    if notes[i].msg:find("^MCP: example__slow_count: ") then mine[#mine + 1] = notes[i] end
  end
  T.eq(4, #mine, "three updates and the end")
  for i = 2, #mine do T.eq(mine[1].opts.id, mine[i].opts.id, "the same notification") end
end)

local function form_buffer()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):find("mcp://elicitation/", 1, true) then return b end
  end
end

local function submit(buf, lines)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_call(buf, function() vim.cmd("write") end)
end

T.test(":McpCall ask_user: elicitation as one form in a floating buffer", function()
  answers = { { "Run tool", 1 } }
  vim.cmd([[McpCall example__ask_user {"question": "Proceed?"}]])
  T.wait_for(form_buffer, 10000 * slow, "the form")
  local buf = form_buffer()
  T.truthy(vim.api.nvim_win_get_config(vim.fn.bufwinid(buf)).relative ~= "", "a floating window")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.eq("# Proceed?", lines[1])
  T.eq("# (asked by the server Lua MCP example server)", lines[2], "which server asks")
  T.eq("answer: yes", lines[#lines], "the default filled in")
  lines[#lines] = "answer: typed in the form"
  submit(buf, lines)
  T.wait_for(function() return buffer_text("mcp://call/example__ask_user") end, 10000 * slow, "the buffer")
  T.truthy(buffer_text("mcp://call/example__ask_user"):find("typed in the form", 1, true))
end)

T.test("the form: 13 fields in one buffer, a wrong field marked and asked again, the others kept", function()
  local props = {}
  for i = 1, 10 do props["s" .. i] = { type = "string" } end
  props.n = { type = "integer", minimum = 1, maximum = 5 }
  props.ok = { type = "boolean" }
  props.color = { type = "string", enum = { "red", "green" } }
  local result
  require("mcp").spawn(function()
    result = require("mcp.nvim.form").handler()({ message = "Many", requested_schema = {
      type = "object", properties = props, required = { "n", "color" } } })
  end)
  T.wait_for(form_buffer, 5000 * slow, "the form")
  local buf = form_buffer()
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local fields = 0
  for i, l in ipairs(lines) do
    local name = l:match("^(%w+):")
    if name then
      fields = fields + 1
      if name == "n" then lines[i] = "n: 9" elseif name == "ok" then lines[i] = "ok: yes"
      elseif name == "color" then lines[i] = "color: green" elseif name == "s3" then lines[i] = "s3: three" end
    end
  end
  T.eq(13, fields, "every field on one form")
  submit(buf, lines)
  T.eq(nil, result, "not submitted with a wrong field")
  T.truthy(vim.api.nvim_buf_is_valid(buf), "the form stays open")
  local marks = vim.api.nvim_buf_get_extmarks(buf, vim.api.nvim_create_namespace("mcp_form"), 0, -1, { details = true })
  T.eq(1, #marks, "one field marked")
  for i, l in ipairs(lines) do if l:match("^n:") then lines[i] = "n: 4" end end
  submit(buf, lines)
  T.wait_for(function() return result ~= nil end, 5000 * slow, "the answer")
  T.eq("accept", result.action)
  T.eq(4, result.content.n)
  T.eq(true, result.content.ok)
  T.eq("green", result.content.color)
  T.eq("three", result.content.s3)
  T.eq(nil, result.content.s1, "an empty optional field is left out")
end)

T.test("the form: q cancels", function()
  local result
  require("mcp").spawn(function()
    result = require("mcp.nvim.form").handler()({ message = "Cancel me", requested_schema = {
      type = "object", properties = { a = { type = "string" } } } })
  end)
  T.wait_for(form_buffer, 5000 * slow, "the form")
  vim.api.nvim_set_current_win(vim.fn.bufwinid(form_buffer()))
  vim.cmd("normal q")
  T.wait_for(function() return result ~= nil end, 5000 * slow, "the answer")
  T.eq("cancel", result.action)
end)

T.test(":McpRead and :McpPrompt", function()
  vim.cmd("McpRead example://greeting")
  T.wait_for(function() return buffer_text("mcp://read/example://greeting") end, 10000 * slow, "the resource")
  T.truthy(#buffer_text("mcp://read/example://greeting") > 20)
  vim.cmd([[McpPrompt example__greet {"name": "Alice"}]])
  T.wait_for(function() return buffer_text("mcp://prompt/example__greet") end, 10000 * slow, "the prompt")
  T.truthy(buffer_text("mcp://prompt/example__greet"):find("greeting for Alice", 1, true))
end)

T.test("chat: CodeCompanion tools and groups, tools_for(format)", function()
  answers = { { "Run tool", 1 } }
  local chat = require("mcp.nvim.chat")
  local cc = chat.codecompanion({ blocking = true })
  T.truthy(cc.example__echo and cc.example__echo.callback.cmds, "a tool by its namespaced name")
  T.truthy(cc.ws__echo, "the workspace server's too")
  T.truthy(vim.tbl_contains(cc.groups.example.tools, "example__echo"), "a group per server")
  T.eq(false, vim.tbl_contains(cc.groups.example.tools, "ws__echo"))
  T.truthy(vim.tbl_contains(cc.groups.mcp.tools, "ws__echo"), "the group mcp has every tool")
  local r = cc.example__echo.callback.cmds[1](nil, { message = "from the chat" })
  T.eq("success", r.status)
  T.truthy(r.data:find("from the chat", 1, true), r.data)
  local av = chat.tools_for("avante")
  local echo
  for _, t in ipairs(av) do if t.name == "example__echo" then echo = t end end
  T.truthy(echo, "an avante tool")
  T.eq("message", echo.param.fields[1].name)
  T.eq(false, echo.param.fields[1].optional)
  local text, err = echo.func({ message = "avante sync" })
  T.truthy(text and text:find("avante sync", 1, true), tostring(err))
  local got
  echo.func({ message = "avante async" }, { on_complete = function(x, e) got = x or e end })
  T.wait_for(function() return got ~= nil end, 10000 * slow, "on_complete")
  T.truthy(got:find("avante async", 1, true), got)
  local oa = chat.tools_for("openai")
  T.truthy(#oa >= 8 and oa[1]["function"].name:find("__", 1, true), "OpenAI tools")
end)

T.test("bad JSON and unknown names are reported", function()
  vim.cmd([[McpCall example__echo {not json]])
  T.truthy(noted("must be a JSON object"))
  vim.cmd([[McpCall no_such_tool {}]])
  T.truthy(noted("no tool named \"no_such_tool\""))
  vim.cmd([[McpRestart nosuch]])
  T.truthy(noted("no server named \"nosuch\""))
end)

T.test(":McpRestart restarts a server", function()
  local before = plugin.hubs[1].hub:client("example")
  vim.cmd("McpRestart example")
  T.wait_for(function()
    local c = plugin.hubs[1].hub:client("example")
    return c ~= nil and c ~= before
  end, 20000 * slow, "a new client")
end)

T.test(":McpRestart with a call in flight: the call finishes on the old client, the next uses the new", function()
  answers = { { "Run tool", 2 } }
  local hub = plugin.hubs[1].hub
  local before = hub:client("example")
  vim.cmd([[McpCall example__slow_count {"n": 6}]])
  T.wait_for(function() return noted("slow_count: 1/6") end, 10000 * slow, "the call under way")
  vim.cmd("McpRestart example")
  T.wait_for(function() return hub:client("example") ~= before end, 20000 * slow, "the new client")
  T.eq(true, before:is_connected(), "the old client stays while its call runs")
  T.wait_for(function() return (buffer_text("mcp://call/example__slow_count") or ""):find("Counted to 6", 1, true) end,
    20000 * slow, "the call in flight finished")
  T.wait_for(function() return not before:is_connected() end, 10000 * slow, "the old client closed after it")
  vim.cmd([[McpCall example__echo {"message": "on the new client"}]])
  T.wait_for(function() return (buffer_text("mcp://call/example__echo") or ""):find("on the new client", 1, true) end,
    10000 * slow, "a call on the new client")
end)

T.test("autoApprove: honoured in the user's file, ignored in a workspace file", function()
  T.eq(0, asked("Run tool slow_count"), "the user's autoApprove: never asked")
  answers = { { "Run tool echo of server ws", 1 } }
  vim.cmd([[McpCall ws__echo {"message": "from the workspace"}]])
  T.wait_for(function() return buffer_text("mcp://call/ws__echo") end, 10000 * slow, "the buffer")
  T.eq(1, asked("Run tool echo of server ws"), "the workspace's autoApprove did not count")
end)

local function read(path)
  local fh = assert(io.open(path, "rb"))
  local text = fh:read("*a")
  fh:close()
  return text
end

local function on_line(pattern)
  local buf = vim.fn.bufnr("mcp://servers")
  vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if l:find(pattern) then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
      return
    end
  end
  error("no line " .. pattern)
end

T.test(":Mcp window: d disables a server and saves it to its file, comments kept", function()
  vim.cmd("Mcp")
  on_line("^example  %[ready%]")
  vim.cmd("normal d")
  T.wait_for(function() return plugin.hubs[1].hub:state("example") == "disabled" end, 10000 * slow, "disabled")
  T.wait_for(function() return (buffer_text("mcp://servers") or ""):find("example  [disabled]", 1, true) end,
    10000 * slow, "the window shown again")
  local text = read(user_file)
  T.truthy(text:find('"example": { "disabled": true, "command"', 1, true), text)
  T.truthy(text:find("// my servers", 1, true), "the comment kept")
  T.eq(true, require("mcp.config").load(user_file, { trusted = true }).servers.example.disabled)
end)

T.test("the disabled flag round-trips through a restart of the plugin; e enables it again", function()
  answers = { { "wants to run", 2 } }
  plugin.stop()
  plugin.wait(20000 * slow)
  T.eq("disabled", plugin.hubs[1].hub:state("example"), "read back from the file")
  vim.cmd("Mcp")
  on_line("^example  %[disabled%]")
  vim.cmd("normal e")
  T.wait_for(function() return plugin.hubs[1].hub:state("example") == "ready" end, 20000 * slow, "enabled")
  T.truthy(read(user_file):find('"example": { "disabled": false, "command"', 1, true))
  plugin.stop()
  plugin.wait(20000 * slow)
  T.eq("ready", plugin.hubs[1].hub:state("example"), "enabled after a restart of the plugin")
end)

T.test(":Mcp window: r restarts the server on the line, R refreshes", function()
  local hub = plugin.hubs[1].hub
  local before = hub:client("example")
  vim.cmd("Mcp")
  on_line("^example  %[ready%]")
  vim.cmd("normal r")
  T.wait_for(function() return hub:client("example") ~= nil and hub:client("example") ~= before end,
    20000 * slow, "a new client")
  local n = #plugin.log
  vim.cmd("normal R")
  T.truthy(buffer_text("mcp://servers"):find("example  [ready]", 1, true))
  vim.cmd("normal gg")
  vim.cmd("normal d")
  T.truthy(noted("not on a server's line"), "d off a server's line")
  T.eq(n, #plugin.log, "nothing changed")
end)

T.test(":McpDisable, :McpEnable and :McpRestart of a disabled server, saved", function()
  -- right after the window's restart: the reconnect may still be listing (it must not undo this)
  vim.cmd("McpDisable example")
  T.wait_for(function() return plugin.hubs[1].hub:state("example") == "disabled" end, 10000 * slow, "disabled")
  T.wait_for(function() return read(user_file):find('"example": { "disabled": true', 1, true) end, 10000 * slow, "saved")
  vim.cmd("McpEnable example")
  T.wait_for(function() return plugin.hubs[1].hub:state("example") == "ready" end, 20000 * slow, "enabled")
  T.wait_for(function() return read(user_file):find('"example": { "disabled": false', 1, true) end, 10000 * slow, "saved")
  vim.cmd("McpRestart off") -- disabled in the file: restarting it enables it
  T.wait_for(function() return plugin.hubs[1].hub:state("off") == "ready" end, 20000 * slow, "off enabled")
  T.wait_for(function() return read(user_file):find('"disabled": false }', 1, true) end, 10000 * slow, "saved")
  T.eq(true, require("mcp.config").load(user_file, { trusted = true }).servers.off.disabled == false)
end)

T.test("a workspace file trusted only once is not written: the change holds for the session", function()
  local ws_file = tmp .. "/ws/.vscode/mcp.json"
  local before = read(ws_file)
  vim.cmd("McpDisable ws")
  T.wait_for(function() return noted("not written") end, 10000 * slow, "the warning")
  T.eq("disabled", plugin.hubs[2].hub:state("ws"))
  T.eq(before, read(ws_file), "the workspace file untouched")
  vim.cmd("McpEnable ws")
  T.wait_for(function() return plugin.hubs[2].hub:state("ws") == "ready" end, 20000 * slow, "enabled again")
end)

T.test("pins are on by default: each tool pinned under stdpath('data') at its first use, without a question", function()
  T.eq(tmp .. "/data/nvim", vim.fn.stdpath("data"))
  T.truthy(plugin.hubs[1].hub.opts.verify, "the user file's hub verifies every call")
  T.truthy(plugin.hubs[2].hub.opts.verify, "the workspace file's hub too")
  local pinned = require("mcp.tools").pin_store({ dir = tmp .. "/data/nvim/lua-mcp" }):load("example")
  T.truthy(pinned.echo, "echo pinned at its first call")
  T.truthy(pinned.slow_count, "the auto-approved slow_count pinned too")
  T.eq(0, asked("Tool .* of server"), "a first use asks nothing more than the approval")
end)

T.test("pins = false: no pins", function()
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, workspace = false, pins = false,
    hub = { trust_dir = tmp .. "/trust" } })
  plugin.start()
  T.eq(nil, plugin.hubs[1].hub.opts.verify)
  plugin.stop()
end)

T.test("the pin prompt's first item, the one Enter takes in most pickers, is Deny", function()
  answers = {}
  local ask = require("mcp.nvim.ui").pins_ask()
  local held = { { name = "t", server = "s", reason = "changed", tool = { name = "t" } } }
  T.eq(0, #ask(held))
  T.eq(1, asked("Tool t of server s changed since it was approved"))
  answers = { { "Tool t of server s", 2 } }
  T.eq("t", ask(held)[1])
end)

-- A "rug pull": the server's echo is not the definition pinned at its first call.
T.test("pins: a tool whose definition changed since its first use is held until allowed, the auto-approved too", function()
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, request_timeout_ms = 30000 * slow,
    on_input = function() return "s3cret" end, hub = { trust_dir = tmp .. "/trust" }, pins = { dir = tmp .. "/pins" } })
  answers = { { "wants to run", 2 }, { "Run tool echo", 1 } }
  plugin.wait(20000 * slow)
  vim.cmd([[McpCall example__echo {"message": "first use"}]])
  T.wait_for(function() return (buffer_text("mcp://call/example__echo") or ""):find("first use", 1, true) end,
    10000 * slow, "the first call")
  vim.cmd([[McpCall example__slow_count {"n": 2}]])
  T.wait_for(function() return (buffer_text("mcp://call/example__slow_count") or ""):find("Counted to 2", 1, true) end,
    10000 * slow, "the first call of slow_count")
  local pins = require("mcp.tools").pin_store({ dir = tmp .. "/pins" })
  local pinned = pins:load("example")
  T.truthy(pinned.echo, "echo pinned at its first call")
  T.truthy(pinned.slow_count, "the auto-approved slow_count pinned too")
  plugin.stop()
  local doc = vim.fn.json_decode(read(pins:path("example")))
  doc.tools.echo, doc.tools.slow_count = "changed-since", "changed-since"
  write(pins:path("example"), vim.fn.json_encode(doc))
  answers = { { "wants to run", 2 } }
  plugin.wait(20000 * slow)
  -- Deny (the first item): the call does not run, and the approve prompt is not reached
  answers = { { "Run tool echo", 1 } }
  local runs = asked("Run tool echo")
  vim.cmd([[McpCall example__echo {"message": "after the change"}]])
  T.wait_for(function() return noted("example__echo: .*held back") end, 10000 * slow, "the denial")
  T.eq(1, asked("Tool echo of server example changed since it was approved"), "asked about the change")
  T.eq(runs, asked("Run tool echo"), "not asked to run it")
  T.truthy(not (buffer_text("mcp://call/example__echo") or ""):find("after the change", 1, true), "not run")
  -- auto-approved (the user's autoApprove): checked all the same
  vim.cmd([[McpCall example__slow_count {"n": 2}]])
  T.wait_for(function() return noted("example__slow_count: .*held back") end, 10000 * slow, "the denial")
  -- Allow: pinned anew, then the usual approval
  answers = { { "Tool echo of server example", 2 }, { "Run tool echo", 1 } }
  vim.cmd([[McpCall example__echo {"message": "allowed again"}]])
  T.wait_for(function() return (buffer_text("mcp://call/example__echo") or ""):find("allowed again", 1, true) end,
    10000 * slow, "the call ran")
  local now = vim.fn.json_decode(read(pins:path("example"))).tools
  T.truthy(now.echo ~= "changed-since", "the new definition pinned in the file")
  T.eq("changed-since", now.slow_count, "slow_count still held")
end)

T.test("${input:...} by the default handler: vim.fn.inputsecret for a password, vim.fn.input otherwise", function()
  write(tmp .. "/ws/.vscode/mcp.json", ([[{
  // both inputs typed in Neovim's command line
  "inputs": [ { "id": "token", "type": "promptString", "description": "API token", "password": true },
              { "id": "region", "type": "promptString", "description": "Region" } ],
  "servers": {
    "ws": { "command": %q, "args": [%q], "env": { "WS_TOKEN": "${input:token}", "WS_REGION": "${input:region}" } },
  },
}]]):format(server_lua, server))
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, request_timeout_ms = 30000 * slow,
    hub = { trust_dir = tmp .. "/trust" } })
  answers = { { "wants to run", 2 } }
  vim.api.nvim_feedkeys("typed-one\rtyped-two\r", "t", false)
  plugin.wait(20000 * slow)
  T.eq("ready", plugin.hubs[2].hub:state("ws"), tostring(select(2, plugin.hubs[2].hub:state("ws"))))
  local env = plugin.hubs[2].hub.config.servers.ws.env
  local got = { env.WS_TOKEN, env.WS_REGION }
  table.sort(got)
  T.eq("typed-one typed-two", table.concat(got, " "), "both typed values (in either order)")
end)

T.test("stop closes every server", function()
  plugin.stop()
  T.wait_for(function() return require("mcp").core.children() == 0 end, 10000 * slow, "the servers reaped")
end)

vim.fn.delete(tmp, "rf")
T.finish()
