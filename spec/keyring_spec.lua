-- mcp.auth.keyring_store: tokens in the Secret Service through secret-tool (argv only, no
-- shell). Against a real GNOME Keyring in a private D-Bus session (dbus-run-session +
-- gnome-keyring-daemon --unlock), pending where those are not installed.
local mcp = require("mcp")
local helper = require("helper")

local function have(cmd) return helper.have_command(cmd) end
local function shq(v) return "'" .. tostring(v):gsub("'", "'\\''") .. "'" end

describe("mcp.auth.keyring_store", function()
  it("without secret-tool, or without a keyring, is a clear nil, err", function()
    local s, err = mcp.auth.keyring_store({ tool = "/nonexistent/secret-tool" })
    assert.is_nil(s)
    assert.equals("unavailable", err.kind)
    assert.truthy(err.message:find("no keyring is available: /nonexistent/secret-tool is not installed", 1, true))
    if not have("secret-tool") then return end
    -- No session bus here (the spec runs with none): secret-tool says why.
    local script = os.tmpname()
    helper.write_file(script, [[
      local s, err = require("mcp").auth.keyring_store()
      print(s and "store" or err.message)
    ]])
    local p = io.popen(("env -u DBUS_SESSION_BUS_ADDRESS -u DISPLAY LUA_PATH=%q LUA_CPATH=%q %s %s 2>&1"):format(
      package.path .. ";;", package.cpath .. ";;", helper.lua_cmd(), script))
    local out = p:read("*a")
    p:close()
    os.remove(script)
    assert.truthy(out:find("mcp.auth.keyring_store: no keyring is available: ", 1, true), out)
  end)

  it("saves, loads and deletes a record in a real keyring; keys with shell syntax stay data", function()
    for _, cmd in ipairs({ "secret-tool", "dbus-run-session", "gnome-keyring-daemon" }) do
      if not have(cmd) then pending(cmd .. " is not installed (Debian: libsecret-tools, dbus-daemon, gnome-keyring)"); return end
    end
    local home = helper.tmpdir()
    local marker = home .. "/pwned"
    local script = home .. "/t.lua"
    -- Under a sanitizer only the Lua interpreter keeps the preloaded runtime: the keyring's
    -- programs (dbus, gnome-keyring, secret-tool) run without it.
    local preload = os.getenv("MCP_TEST_SANITIZER") and os.getenv("LD_PRELOAD") or nil
    local tool = "secret-tool"
    if preload then
      tool = home .. "/secret-tool"
      helper.write_file(tool, "#!/bin/sh\nexec env -u LD_PRELOAD secret-tool \"$@\"\n")
      os.execute("chmod +x '" .. tool .. "'")
    end
    helper.write_file(script, ([[
      local mcp = require("mcp")
      local s = assert(mcp.auth.keyring_store({ service = "lua-mcp-spec", tool = ]] .. ("%q"):format(tool) .. [[ }))
      local key = "https://mcp.example/$(touch %s)`touch %s`;'\"|"
      assert(s:load(key) == nil)
      s:save(key, { tokens = { access_token = "at-1" }, client = { client_id = "c" } })
      local rec = assert(s:load(key))
      assert(rec.tokens.access_token == "at-1" and rec.client.client_id == "c")
      assert(s:load("another") == nil)
      s:delete(key)
      assert(s:load(key) == nil)
      print("keyring ok")
    ]]):format(marker, marker))
    local inner = ("printf testpw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; "
      .. "LD_PRELOAD=\"$SPEC_PRELOAD\" LUA_PATH=%q LUA_CPATH=%q %s %s"):format(package.path .. ";;", package.cpath .. ";;",
      helper.lua_cmd(), script)
    if not preload then inner = inner:gsub('^(.-; )LD_PRELOAD="%$SPEC_PRELOAD" ', "%1") end
    local cmd = ("SPEC_PRELOAD=%q HOME=%q XDG_DATA_HOME=%q XDG_RUNTIME_DIR=%q env -u LD_PRELOAD dbus-run-session -- sh -c %s 2>&1"):format(
      preload or "", home, home .. "/data", home, shq(inner))
    local p = io.popen(cmd)
    local out = p:read("*a")
    p:close()
    local f = io.open(marker)
    if f then f:close() end
    helper.remove_tmpdirs()
    assert.truthy(out:find("keyring ok", 1, true), out)
    assert.is_nil(f)
  end)
end)
