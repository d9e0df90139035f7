-- Confined stdio servers (mcp.sandbox, src/transports/sandbox.c): Landlock refuses what the
-- sandbox does not grant, for the official filesystem server (whose own allowlist would permit
-- it) and for a server that connects out; "required" fails clearly where the kernel cannot
-- enforce, "best_effort" starts and reports. Enforcement specs are pending without Landlock.
local mcp = require("mcp")
local helper = require("helper")
local sandbox = require("mcp.sandbox")

local unpack = table.unpack or unpack
local LUA = helper.lua_cmd()
local PROBE = helper.fixtures .. "/sandbox_probe.lua"
local ABI = mcp.core.sandbox_abi()
local LUA_DIRS = { helper.root .. "/examples/servers", helper.fixtures, "/usr/share/lua", "/usr/local/share/lua" }

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(mcp.core.mkdir_private(d))
  return d
end

local function text(res) return res and res.content and res.content[1] and res.content[1].text end

local function probe(sb)
  return mcp.create_stdio_client(LUA, { PROBE }, { sandbox = sb, stderr = "discard" })
end

describe("mcp.sandbox", function()
  local dir
  before_each(function()
    dir = tmpdir()
    assert(mcp.core.mkdir_private(dir .. "/inside"))
    helper.write_file(dir .. "/inside/in.txt", "hello inside\n")
    helper.write_file(dir .. "/outside.txt", "secret outside\n")
  end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("resolves presets and the defaults; misuse raises", function()
    local s = sandbox.resolve("npx")
    assert.is_true(s.net)
    local function has(l, v) for _, x in ipairs(l) do if x == v then return true end end return false end
    assert.is_true(has(s.read, "/usr/lib"))
    assert.is_true(has(s.read, "/etc/ssl"))
    assert.is_true(has(s.write, "/dev/null"))
    s = sandbox.resolve({ preset = "uvx", read = { "/srv/x" }, net = false })
    assert.is_false(s.net)
    assert.is_true(has(s.read, "/srv/x"))
    assert.is_nil(sandbox.resolve(nil))
    assert.has_error(function() sandbox.resolve("docker") end, "mcp.sandbox: unknown preset 'docker' (npx, uvx)")
    assert.has_error(function() sandbox.resolve({ mode = "maybe" }) end, 'mcp.sandbox: mode must be "required" or "best_effort"')
    assert.has_error(function() sandbox.resolve({ raed = {} }) end, "mcp.sandbox: unknown field 'raed'")
    assert.has_error(function() mcp.stdio_transport({ command = "x", sandbox = 5 }) end)
  end)

  it("the kernel refuses a read outside the sandbox; inside works", function()
    if ABI < 1 then pending("this kernel has no Landlock (enforcement untestable here)"); return end
    local c = assert(probe({ read = { dir .. "/inside", unpack(LUA_DIRS) } }))
    assert.equals("read: hello inside", text(c:call_tool("read", { path = dir .. "/inside/in.txt" })))
    assert.truthy(text(c:call_tool("read", { path = dir .. "/outside.txt" })):find("Permission denied", 1, true))
    c:close()
    -- Unconfined, the same read works: the refusal is the sandbox's.
    c = assert(probe(nil))
    assert.equals("read: secret outside", text(c:call_tool("read", { path = dir .. "/outside.txt" })))
    c:close()
  end)

  it("the official filesystem server cannot read outside the sandbox even where its own allowlist permits", function()
    local bin = os.getenv("MCP_FILESYSTEM_SERVER")
    local f = bin and io.open(bin)
    if not f then pending("the filesystem server is not installed (make deps)"); return end
    f:close()
    if ABI < 1 then pending("this kernel has no Landlock (enforcement untestable here)"); return end
    -- The package lives under node_modules; its real directory tree is what node must read.
    local pkg = bin:gsub("/%.bin/[^/]+$", "")
    local function client(sb)
      return assert(mcp.create_stdio_client(bin, { dir }, { sandbox = sb, stderr = "discard" }))
    end
    local c = client(nil)
    assert.equals("secret outside\n", text(c:call_tool("read_text_file", { path = dir .. "/outside.txt" })))
    c:close()
    c = client({ read = { pkg, "/etc/ssl", dir .. "/inside" }, net = false })
    assert.equals("hello inside\n", text(c:call_tool("read_text_file", { path = dir .. "/inside/in.txt" })))
    local res = c:call_tool("read_text_file", { path = dir .. "/outside.txt" })
    assert.is_true(res.isError)
    assert.truthy(text(res):find("EACCES", 1, true), text(res))
    c:close()
  end)

  it("writes: only beneath the write paths; a read path is read-only, and nothing else is writable", function()
    if ABI < 1 then pending("this kernel has no Landlock (enforcement untestable here)"); return end
    assert(mcp.core.mkdir_private(dir .. "/out"))
    local c = assert(probe({ read = { dir .. "/inside", unpack(LUA_DIRS) }, write = { dir .. "/out" } }))
    assert.equals("wrote", text(c:call_tool("write", { path = dir .. "/out/new.txt" })))
    assert.truthy(text(c:call_tool("write", { path = dir .. "/new.txt" })):find("Permission denied", 1, true))
    assert.truthy(text(c:call_tool("write", { path = dir .. "/inside/in.txt" })):find("Permission denied", 1, true))
    assert.truthy(text(c:call_tool("write", { path = dir .. "/outside.txt" })):find("Permission denied", 1, true))
    c:close()
    assert.equals("written\n", helper.read_file(dir .. "/out/new.txt"))
    assert.equals("hello inside\n", helper.read_file(dir .. "/inside/in.txt"))
    assert.equals("secret outside\n", helper.read_file(dir .. "/outside.txt"))
    assert.is_nil(io.open(dir .. "/new.txt"))
  end)

  it("a workspace file's own \"sandbox\" cannot widen the hub's: there the host's sandbox holds", function()
    if ABI < 1 then pending("this kernel has no Landlock (enforcement untestable here)"); return end
    local file = dir .. "/ws.json" -- not in the user's own configuration
    helper.write_file(file, mcp.json.encode({ mcpServers = {
      p = { command = LUA, args = { PROBE }, sandbox = { read = { "/" }, write = { "/" }, mode = "best_effort" } },
    } }))
    local store = dir .. "/trust"
    local hub = assert(mcp.hub(file, { trust_dir = store, trust = function() return "once" end,
      sandbox = { read = LUA_DIRS } }))
    assert.equals("ready", (hub:state("p")))
    local res = assert(hub:call_tool("p__read", { path = dir .. "/outside.txt" }))
    assert.truthy(text(res):find("Permission denied", 1, true), text(res))
    res = assert(hub:call_tool("p__write", { path = dir .. "/new.txt" }))
    assert.truthy(text(res):find("Permission denied", 1, true), text(res))
    hub:close()
    -- The same entry in a file the host trusts is the user's choice: its sandbox replaces the hub's.
    hub = assert(mcp.hub(file, { trusted = true, sandbox = { read = LUA_DIRS } }))
    res = assert(hub:call_tool("p__read", { path = dir .. "/outside.txt" }))
    assert.equals("read: secret outside", text(res))
    hub:close()
  end)

  it("net = false: the kernel refuses a TCP connection, also from the server's children", function()
    if ABI < 4 then pending("Landlock ABI " .. ABI .. " < 4: no network rules on this kernel"); return end
    local port = 1 -- tcpmux: nothing listens there, so unconfined the answer is a refusal
    local c = assert(probe({ read = LUA_DIRS }))
    assert.truthy(text(c:call_tool("connect", { port = port })):find("Connection refused", 1, true))
    c:close()
    c = assert(probe({ read = LUA_DIRS, net = false }))
    assert.truthy(text(c:call_tool("connect", { port = port })):find("Permission denied", 1, true))
    c:close()
  end)

  it("no signal from inside the sandbox reaches a process outside it (Landlock ABI 6 scoping)", function()
    if ABI < 6 then pending("Landlock ABI " .. ABI .. " < 6: no scoping on this kernel"); return end
    local p = io.popen("sleep 30 >/dev/null 2>&1 & echo $!")
    local pid = tonumber(p:read("*l"))
    p:close()
    local c = assert(probe(nil))
    assert.equals("signalled\n", text(c:call_tool("signal", { pid = pid })))
    c:close()
    c = assert(probe({ read = LUA_DIRS }))
    local out = text(c:call_tool("signal", { pid = pid }))
    assert.truthy(out:find("not permitted", 1, true), out)
    c:close()
    os.execute("kill " .. pid)
  end)

  it("a confined server gets no terminal: its stderr comes through a pipe, escaped (no TIOCSTI, no escapes)", function()
    if ABI < 1 then pending("this kernel has no Landlock (enforcement untestable here)"); return end
    if not helper.have_command("script") then pending("script (util-linux) is missing: no terminal to test on"); return end
    local script = dir .. "/tty.lua"
    local function run_on_tty(sb_lua)
      helper.write_file(script, ([[
        local mcp = require("mcp")
        local c = assert(mcp.create_stdio_client(%q, { %q }, { sandbox = %s }))
        local p = io.popen("/usr/bin/python3 -c 'import os; print(os.getsid(0))'")
        print("HOSTSID " .. p:read("*l"))
        p:close()
        print("RESULT " .. c:call_tool("tty", { sti = true }).content[1].text)
        c:close()
      ]]):format(LUA, PROBE, sb_lua))
      local cmd = ("LUA_PATH=%q LUA_CPATH=%q script -qec '%s %s' /dev/null"):format(package.path .. ";;",
        package.cpath .. ";;", LUA, script)
      local p = io.popen(cmd)
      local out = p:read("*a")
      p:close()
      return out
    end
    local dirs = "{ " .. ("%q, "):rep(#LUA_DIRS):format(unpack(LUA_DIRS)) .. "}"
    -- Unconfined, the server's stderr is the terminal (inherited): the test can see one.
    local function sids(out)
      return out:match("HOSTSID (%d+)"), out:match("RESULT [^\n]- sid=(%d+)")
    end
    local out = run_on_tty("nil")
    assert.truthy(out:find("RESULT terminal", 1, true), out)
    local host, server = sids(out)
    assert.equal(host, server, out) -- unconfined: the host's session (and its terminal)
    out = run_on_tty("{ read = " .. dirs .. " }")
    assert.truthy(out:find("RESULT not a terminal", 1, true), out)
    host, server = sids(out)
    assert.truthy(host and server, out)
    assert.are_not.equal(host, server, out) -- a session of its own: no controlling terminal
    assert.is_nil(out:find("typed", 1, true), out)
    assert.is_nil(out:find("\27", 1, true), out)
    assert.truthy(out:find("\\x1b]0;pwned\\x07 from stderr", 1, true), out)
  end)

  it("a config entry's \"sandbox\" confines its server in the hub, and mcp-lua --sandbox confines the CLI's", function()
    if ABI < 1 then pending("this kernel has no Landlock (enforcement untestable here)"); return end
    local file = dir .. "/mcp.json"
    helper.write_file(file, mcp.json.encode({ mcpServers = {
      p = { command = LUA, args = { PROBE }, sandbox = { read = LUA_DIRS } },
    } }))
    local hub = assert(mcp.hub(file, { trusted = true }))
    local res = assert(hub:call_tool("p__read", { path = dir .. "/inside/in.txt" }))
    assert.truthy(text(res):find("Permission denied", 1, true), text(res))
    hub:close()
    local sb = mcp.json.encode({ read = LUA_DIRS })
    local cmd = ("LUA_PATH=%q LUA_CPATH=%q %s %s/bin/mcp-lua --sandbox '%s' call read '{\"path\": \"%s\"}' -- %s %s 2>&1"):format(
      package.path .. ";;", package.cpath .. ";;", LUA, helper.root, sb, dir .. "/outside.txt", LUA, PROBE)
    local p = io.popen(cmd)
    local out = p:read("*a")
    p:close()
    assert.truthy(out:find("error: .*Permission denied"), out)
    p = io.popen(("LUA_PATH=%q LUA_CPATH=%q %s %s/bin/mcp-lua --sandbox dockr tools -- x 2>&1; echo \"exit $?\""):format(
      package.path .. ";;", package.cpath .. ";;", LUA, helper.root))
    out = p:read("*a")
    p:close()
    assert.truthy(out:find("--sandbox: unknown preset 'dockr' (npx, uvx)", 1, true), out)
    assert.truthy(out:find("exit 2", 1, true), out)
  end)

  -- An older kernel, played by capping the ABI the core sees (MCP_TEST_LANDLOCK_ABI, test builds).
  local function run_capped(abi, sb_lua)
    local script = os.tmpname()
    helper.write_file(script, ([[
      local mcp = require("mcp")
      local reports = {}
      local c, err = mcp.create_stdio_client(%q, { %q }, { stderr = "discard", sandbox = %s })
      if c then
        print("started", #reports > 0 and reports[1].message or "-")
        c:close()
      else
        print("failed", err.message)
      end
    ]]):format(LUA, PROBE, sb_lua))
    local cmd = ("MCP_TEST_LANDLOCK_ABI=%d LUA_PATH=%q LUA_CPATH=%q %s %s 2>&1"):format(abi, package.path .. ";;",
      package.cpath .. ";;", LUA, script)
    local p = io.popen(cmd)
    local out = p:read("*a")
    p:close()
    os.remove(script)
    return out
  end

  it('"required" fails with a clear error where the kernel cannot enforce; "best_effort" starts and reports', function()
    local sb = "{ read = %s, net = false, mode = %q, on_error = function(e) reports[#reports + 1] = e end }"
    local dirs = "{ " .. ("%q, "):rep(#LUA_DIRS):format(unpack(LUA_DIRS)) .. "}"
    local out = run_capped(0, sb:format(dirs, "required"))
    assert.truthy(out:find("failed .*sandbox: this kernel cannot enforce it %(Landlock is not available%)"), out)
    out = run_capped(3, sb:format(dirs, "required"))
    assert.truthy(out:find("failed .*sandbox: net = false needs Landlock ABI 4 %(this kernel has 3%)"), out)
    if ABI >= 1 then
      out = run_capped(3, sb:format(dirs, "best_effort"))
      assert.truthy(out:find("started\tmcp.sandbox: net = false is not enforced: it needs Landlock ABI 4 (this kernel has 3)",
        1, true), out)
    end
    out = run_capped(0, sb:format(dirs, "best_effort"))
    assert.truthy(out:find("started\tmcp.sandbox: the sandbox is not enforced: this kernel has no Landlock", 1, true), out)
  end)

  -- The ruleset is opened before the pipes: in a host whose 0-2 are closed it lands on one of them,
  -- and putting the pipes on 0-2 in the child must not overwrite it (it did: EBADFD).
  it("a host whose stdin, stdout and stderr are closed starts a confined server that works", function()
    if ABI < 1 then pending("this kernel has no Landlock (enforcement untestable here)"); return end
    local script, result = dir .. "/host.lua", dir .. "/result"
    local dirs = "{ " .. ("%q, "):rep(#LUA_DIRS):format(unpack(LUA_DIRS)) .. "}"
    helper.write_file(script, ([[
      local mcp = require("mcp")
      local out = assert(io.open(%q, "w"))
      local c, err = mcp.create_stdio_client(%q, { %q }, { stderr = "discard", sandbox = { read = { %q, unpack(%s) } } })
      if not c then out:write("error=", tostring(err and err.message or err), "\n") out:close() return end
      local function text(r) return r and r.content and r.content[1] and r.content[1].text end
      out:write("inside=", tostring(text(c:call_tool("read", { path = %q }))), "\n")
      out:write("outside=", tostring(text(c:call_tool("read", { path = %q }))), "\n")
      c:close()
      out:close()
    ]]):format(result, LUA, PROBE, dir .. "/inside", dirs, dir .. "/inside/in.txt", dir .. "/outside.txt"))
    local cmd = ("LUA_PATH=%q LUA_CPATH=%q %s -e 'unpack = table.unpack or unpack' %s 0<&- 1>&- 2>&-"):format(
      package.path .. ";;", package.cpath .. ";;", LUA, script)
    os.execute(cmd)
    local out = helper.read_file(result) or "(no result)"
    assert.truthy(out:find("inside=read: hello inside", 1, true), out)
    assert.truthy(out:find("outside=[^\n]*Permission denied"), out)
  end)
end)
