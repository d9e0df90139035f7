-- mcp.hub's background_start asks no one: a start no one asked for (an editor's startup) calls
-- neither the trust hook (a workspace file's server not trusted yet) nor on_input (an
-- ${input:...}) while it reads the config. Such a server does not start and is not failed: it
-- waits in "answer_required" until the user's restart (hub:restart, hub:reconnect, hub:enable),
-- which reads its entry again and asks. A yes remembered for the file's content, and values in
-- opts.inputs, still count. Without background_start nothing changes.
local mcp = require("mcp")
local helper = require("helper")

local LUA = helper.lua_cmd()
local T = helper.test_server_path

local function server(...)
  return { command = LUA, args = { T, ... } }
end

-- A config with a server that has an ${input:...} (declared: a password, a description).
local function with_input(extra)
  local servers = { a = server("--name=a"), keyed = server("--name=${input:name}") }
  for k, v in pairs(extra or {}) do servers[k] = v end
  return { servers = servers,
    inputs = { { id = "name", type = "promptString", description = "The server's name", password = true } } }
end

-- An on_input handler (or a trust hook) that counts its calls, answering `answer`.
local function counting(answer)
  local c = { calls = {} }
  c.fn = function(x)
    c.calls[#c.calls + 1] = x
    return answer
  end
  return c
end

-- on_state recorder: the events in order, as "name:state", and each one's info.
local function recorder()
  local r = { events = {}, info = {} }
  function r.on_state(name, state, info)
    r.events[#r.events + 1] = name .. ":" .. state
    r.info[name .. ":" .. state] = info
  end
  function r.count(ev)
    local n = 0
    for _, e in ipairs(r.events) do if e == ev then n = n + 1 end end
    return n
  end
  return r
end

-- How many of the hub's tools are the server name's.
local function tools_of(hub, name)
  local n = 0
  for _, t in ipairs(hub:list_tools()) do if t.server == name then n = n + 1 end end
  return n
end

describe("mcp.hub background_start asks no one", function()
  local dir, store, file
  before_each(function()
    dir, store = helper.tmpdir(), helper.tmpdir()
    file = dir .. "/.vscode-mcp.json" -- a workspace's file: not in the user's own configuration
  end)
  after_each(helper.remove_tmpdirs)

  -- A workspace file: `ws` the test server, `evil` a command that leaves a mark when it runs.
  local function write_workspace(marker)
    helper.write_file(file, mcp.json.encode({ mcpServers = {
      ws = server("--name=ws"),
      evil = { command = "sh", args = { "-c", "touch " .. marker } },
    } }))
  end

  it("an ${input:...} is not asked: the server waits in answer_required; hub:restart asks once and starts it", function()
    local input, rec = counting("from-input"), recorder()
    local hub = assert(mcp.hub(with_input(), { background_start = true, on_input = input.fn, on_state = rec.on_state }))
    assert.is_true(hub:wait())
    assert.equals(0, #input.calls)
    assert.equals("ready", hub:state("a"))
    local st, err = hub:state("keyed")
    assert.equals("answer_required", st)
    assert.equals("unasked", err.kind)
    assert.equals("keyed", err.server)
    assert.truthy(helper.has(err.message, "server 'keyed' waits for your answer"), err.message)
    assert.truthy(helper.has(err.message, "${input:name}"), err.message)
    assert.equals("unasked", err.cause.kind)
    -- on_state says it once, with the error; nothing of the server is listed, a call says why
    assert.equals(1, rec.count("keyed:answer_required"))
    assert.equals(err, rec.info["keyed:answer_required"].error)
    assert.equals(0, rec.count("keyed:connecting"))
    assert.equals(0, rec.count("keyed:failed"))
    assert.truthy(tools_of(hub, "a") > 0)
    assert.equals(0, tools_of(hub, "keyed"))
    local res, cerr = hub:call_tool("keyed__echo", { message = "x" })
    assert.is_nil(res)
    assert.equals("unavailable", cerr.kind)
    assert.equals(err, cerr.cause)
    -- the user's restart asks, as the file declares the input, and the server starts
    hub:restart("keyed")
    assert.equals(1, #input.calls)
    assert.equals("name", input.calls[1].id)
    assert.is_true(input.calls[1].password)
    assert.equals("The server's name", input.calls[1].description)
    assert.equals("keyed", input.calls[1].server)
    assert.equals("ready", hub:state("keyed"))
    assert.equals("from-input", hub:client("keyed"):server_info().name)
    assert.is_nil(select(2, hub:state("keyed")))
    assert.truthy(tools_of(hub, "keyed") > 0)
    hub:close()
  end)

  it("a workspace file's server is not asked about and does not run; hub:restart asks, and the yes is remembered", function()
    local marker = dir .. "/ran"
    write_workspace(marker)
    local hook, rec = counting(true), recorder()
    local hub = assert(mcp.hub(file, { background_start = true, trust = hook.fn, trust_dir = store,
      on_state = rec.on_state }))
    assert.is_true(hub:wait())
    assert.equals(0, #hook.calls)
    for _, name in ipairs({ "ws", "evil" }) do
      local st, err = hub:state(name)
      assert.equals("answer_required", st)
      assert.equals("unasked", err.kind)
      assert.truthy(helper.has(err.message, "trust question"), err.message)
      assert.equals(0, rec.count(name .. ":connecting"))
    end
    local function entry(name)
      for _, s in ipairs(hub:servers()) do if s.name == name then return s end end
    end
    assert.is_nil(entry("ws").spec.command) -- (its entry was not read)
    hub:restart("ws")
    assert.equals(1, #hook.calls)
    assert.equals("ws", hook.calls[1].name)
    assert.equals("ready", hub:state("ws"))
    assert.equals("answer_required", hub:state("evil"))
    -- hub:servers() gives the entry the restart read (the plugin's :McpLogin reads it: with the
    -- first read's, an HTTP server was "not an HTTP server")
    assert.equals(LUA, entry("ws").spec.command)
    assert.equals("stdio", entry("ws").type)
    hub:close()
    mcp.sleep(100)
    assert.is_false(helper.file_exists(marker))
    -- remembered for this content: the next start no one asked for starts it without a question
    hook = counting(true)
    hub = assert(mcp.hub(file, { background_start = true, trust = hook.fn, trust_dir = store }))
    assert.equals(0, #hook.calls)
    assert.equals("ready", hub:state("ws"))
    assert.equals("answer_required", hub:state("evil"))
    hub:close()
  end)

  it("a restart answered no fails the server and runs nothing", function()
    local marker = dir .. "/ran"
    write_workspace(marker)
    local hook = counting(false)
    local hub = assert(mcp.hub(file, { background_start = true, trust = hook.fn, trust_dir = store }))
    hub:restart("evil")
    assert.equals(1, #hook.calls)
    local st, err = hub:state("evil")
    assert.equals("failed", st)
    assert.equals("untrusted", err.kind)
    hub:close()
    mcp.sleep(100)
    assert.is_false(helper.file_exists(marker))
  end)

  -- (the file changed on disk after the hub read it: :McpDisable of another server rewrote it, and
  -- its remembered yes followed the file to its new content. The restart's yes is for content no
  -- longer on disk: remembered for it, it replaced the file's record, and the other server's yes
  -- for the file as it is now was lost)
  it("a restart after the file changed on disk asks and keeps the yes remembered for the file as it is now", function()
    local T2 = { mcpServers = { ws = server("--name=ws"), kept = server("--name=kept") } }
    helper.write_file(file, mcp.json.encode(T2))
    local trust = mcp.config.trust
    assert(trust.remember(store, file, trust.hash(helper.read_file(file)), "kept"))
    local hook = counting(true)
    local hub = assert(mcp.hub(file, { background_start = true, trust = hook.fn, trust_dir = store }))
    finally(function() hub:close() end)
    assert.equals("ready", hub:state("kept"))
    assert.equals("answer_required", hub:state("ws"))
    helper.write_file(file, mcp.json.encode(T2) .. "\n") -- (rewritten: another content)
    local now = trust.hash(helper.read_file(file))
    assert(trust.remember(store, file, now, "kept"))
    hub:restart("ws")
    assert.equals(1, #hook.calls)
    assert.equals("ready", hub:state("ws"))
    assert.is_true(trust.remembered(store, file, now, "kept"))
  end)

  it("hub:enable and hub:reconnect of a server waiting for an answer ask and start it; disable then enable too", function()
    local input = counting("asked")
    local hub = assert(mcp.hub(with_input({ keyed2 = server("--name=${input:name}-2") }),
      { background_start = true, on_input = input.fn }))
    assert.equals("answer_required", hub:state("keyed"))
    assert.equals("answer_required", hub:state("keyed2"))
    hub:enable("keyed")
    assert.equals(1, #input.calls)
    assert.equals("ready", hub:state("keyed"))
    assert.truthy(hub:reconnect("keyed2"))
    assert.equals(2, #input.calls)
    assert.equals("ready", hub:state("keyed2"))
    assert.equals("asked-2", hub:client("keyed2"):server_info().name)
    hub:close()
    input = counting("asked")
    hub = assert(mcp.hub(with_input(), { background_start = true, on_input = input.fn }))
    hub:disable("keyed")
    assert.equals("disabled", hub:state("keyed"))
    hub:enable("keyed")
    assert.equals(1, #input.calls)
    assert.equals("ready", hub:state("keyed"))
    hub:close()
  end)

  it("values in opts.inputs and a yes remembered before still count: those servers start", function()
    local input = counting("never")
    local hub = assert(mcp.hub(with_input(), { background_start = true, on_input = input.fn,
      inputs = { name = "preset" } }))
    assert.equals(0, #input.calls)
    assert.equals("ready", hub:state("keyed"))
    assert.equals("preset", hub:client("keyed"):server_info().name)
    hub:close()
    write_workspace(dir .. "/ran")
    assert(mcp.config.trust.remember(store, file, mcp.config.trust.hash(helper.read_file(file)), "ws"))
    local hook = counting(true)
    hub = assert(mcp.hub(file, { background_start = true, trust = hook.fn, trust_dir = store }))
    assert.equals(0, #hook.calls)
    assert.equals("ready", hub:state("ws"))
    assert.equals("answer_required", hub:state("evil"))
    hub:close()
  end)

  it("with nothing to ask with (no hook, no on_input) the server fails as before: a restart would ask no one", function()
    write_workspace(dir .. "/ran")
    local hub = assert(mcp.hub(file, { background_start = true, trust_dir = store }))
    assert.equals("failed", hub:state("evil"))
    assert.equals("untrusted", select(2, hub:state("evil")).kind)
    hub:close()
    hub = assert(mcp.hub(with_input(), { background_start = true }))
    assert.equals("failed", hub:state("keyed"))
    assert.equals("config", select(2, hub:state("keyed")).kind)
    hub:close()
  end)

  it("without background_start nothing changes: the first start asks", function()
    local input = counting("from-input")
    local hub = assert(mcp.hub(with_input(), { on_input = input.fn }))
    assert.equals(1, #input.calls)
    assert.equals("ready", hub:state("keyed"))
    hub:close()
    write_workspace(dir .. "/ran")
    local hook = counting(false)
    hub = assert(mcp.hub(file, { trust = hook.fn, trust_dir = store }))
    assert.equals(2, #hook.calls)
    assert.equals("failed", hub:state("ws"))
    assert.equals("untrusted", select(2, hub:state("ws")).kind)
    hub:close()
  end)

  it("mcp.config.load with ask = false: nil, err of kind unasked; the loaded file carries its sha256", function()
    local input = counting("x")
    local cfg, err = mcp.config.load(with_input(), { ask = false, on_input = input.fn })
    assert.is_nil(cfg)
    assert.equals("unasked", err.kind)
    assert.equals("keyed", err.server)
    assert.equals(0, #input.calls)
    write_workspace(dir .. "/ran")
    local hook = counting(true)
    cfg = assert(mcp.config.load(file, { ask = false, keep_going = true, trust = hook.fn, trust_dir = store }))
    assert.equals(0, #hook.calls)
    assert.equals("unasked", cfg.errors.ws.kind)
    assert.equals(mcp.config.trust.hash(helper.read_file(file)), cfg.sha256)
    assert.has_error(function() mcp.config.load(file, { ask = "no" }) end, "mcp.config.load: opts.ask must be a boolean")
    assert.has_error(function() mcp.config.load({ mcpServers = {} }, { sha256 = "abc" }) end,
      "mcp.config.load: opts.sha256 must be a hex SHA-256")
  end)
end)
