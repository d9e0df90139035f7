-- mcp.auth.keyring_store: tokens in the Secret Service through secret-tool (argv only, no
-- shell). Against a real GNOME Keyring in a private D-Bus session (dbus-run-session +
-- gnome-keyring-daemon --unlock), pending where those are not installed; and against a recording
-- fake secret-tool: in a task the tool runs on a helper thread (the loop steps meanwhile, the
-- timeout still kills it), the store keeps what it read and wrote, and leaves no child or
-- descriptor behind (close(), the Lua state's end).
local mcp = require("mcp")
local helper = require("helper")

local function have(cmd) return helper.have_command(cmd) end

-- A recording fake secret-tool over <dir>/items (one file per key attribute): every run appends
-- "<command> <pid>" to <dir>/log ("probe" for the store's probe, a lookup). With <dir>/slow it first sleeps 0.3 s; with <dir>/hang it
-- writes its pid to <dir>/pid and sleeps 30 s (exec: the pid is the sleep's). With <dir>/locked it
-- answers as secret-tool 0.20.5 did against a locked GNOME Keyring whose unlock prompt could not be
-- shown: lookup exits 1 saying nothing, item or not; search (which never unlocks) still lists a
-- matching item, on stdout, and says on stderr that it cannot get its secret. With <dir>/nosearch,
-- search is an unknown command (usage on stderr, exit 2). clear exits 1 saying nothing when no item
-- matches (as secret-tool 0.20.5 does); with <dir>/clearfails it says why on stderr and exits 1,
-- with <dir>/clearsilent it exits 1 saying nothing; either way it deletes nothing.
local FAKE = [=[#!/bin/sh
d=DIR
v=$1; [ "$5" = lua-mcp-probe ] && v=probe
echo "$v $$" >> "$d/log"
if [ -f "$d/hang" ]; then echo $$ > "$d/pid.tmp"; mv "$d/pid.tmp" "$d/pid"; exec sleep 30; fi
if [ -f "$d/slow" ]; then sleep 0.3; fi
case "$1" in
lookup) [ -f "$d/locked" ] && exit 1; [ -f "$d/items/$5" ] || exit 1; cat "$d/items/$5" ;;
search)
  [ -f "$d/nosearch" ] && { echo "usage: secret-tool store --label='label' attribute value ..." >&2; exit 2; }
  [ -f "$d/items/$5" ] || exit 0
  printf '[/1]\nlabel = lua-mcp\n'
  if [ -f "$d/locked" ]; then echo "secret-tool: Cannot get secret of a locked object" >&2; else cat "$d/items/$5"; fi ;;
store) cat > "$d/items/$6" ;;
clear)
  [ -f "$d/clearfails" ] && { echo "secret-tool: Cannot delete: the prompt was dismissed" >&2; exit 1; }
  [ -f "$d/clearsilent" ] && exit 1
  [ -f "$d/items/$5" ] || exit 1
  rm -f "$d/items/$5" ;;
esac
]=]

local function fake()
  local dir = helper.tmpdir()
  assert(mcp.core.mkdir_private(dir .. "/items"))
  helper.write_file(dir .. "/secret-tool", (FAKE:gsub("DIR", "'" .. dir .. "'", 1)))
  assert(mcp.core.run_program({ "chmod", "+x", dir .. "/secret-tool" }))
  return dir, dir .. "/secret-tool"
end

-- How many runs of the fake there were, in all or of one command.
local function runs(dir, command)
  local n = 0
  for verb in (helper.read_file(dir .. "/log") or ""):gmatch("(%S+) %d+\n") do
    if command == nil or verb == command then n = n + 1 end
  end
  return n
end

local function touch(path) helper.write_file(path, "") end

local in_task_counting = helper.in_task_counting

local open_fds = require("hostile.bounds").fd_count

local function shq(v) return "'" .. tostring(v):gsub("'", "'\\''") .. "'" end

describe("mcp.auth.keyring_store", function()
  teardown(helper.remove_tmpdirs)

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

describe("mcp.auth.keyring_store from a task (against a recording fake secret-tool)", function()
  teardown(helper.remove_tmpdirs)
  -- a failed assertion in a task fails the spec (mcp.run() raises what the hook raised)
  local prev
  before_each(function() prev = mcp.on_task_error(function(err) error(err, 0) end) end)
  after_each(function() mcp.on_task_error(prev) end)

  it("runs the tool on a helper thread: the loop and the other tasks go on while it runs", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    touch(dir .. "/slow")
    local during, rec = in_task_counting(function() return s:load("https://mcp.example/") end)
    assert.is_nil(rec)
    assert.equals(1, runs(dir, "lookup"))
    assert.is_true(during > 0, "the loop did not step while secret-tool ran")
    -- a save from a task as well (and what it saved is loaded back)
    during = in_task_counting(function() s:save("https://mcp.example/", { tokens = { access_token = "at" } }) end)
    assert.is_true(during > 0, "the loop did not step while secret-tool ran")
    assert.equals(1, runs(dir, "store"))
    assert.equals("at", mcp.auth.keyring_store({ tool = tool }):load("https://mcp.example/").tokens.access_token)
  end)

  it("still kills a tool that hangs past timeout_ms, from a task; the failure is not kept", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool, timeout_ms = helper.ms(500) }))
    touch(dir .. "/hang")
    local during, rec = in_task_counting(function() return s:load("https://mcp.example/") end)
    assert.is_nil(rec)
    assert.is_true(during > 0, "the loop did not step while secret-tool hung")
    local pid = assert(tonumber(helper.read_file(dir .. "/pid")))
    assert.is_false(helper.proc_exists(pid)) -- killed and reaped (a zombie would still exist)
    os.remove(dir .. "/hang")
    assert.is_nil(s:load("https://mcp.example/"))
    assert.equals(2, runs(dir, "lookup")) -- asked again: a failed read is not kept
  end)

  it("keeps what it read and wrote in memory: a second connect does not run the tool again", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    local url = "https://mcp.example/"
    assert.equals(1, runs(dir)) -- the probe
    local function connect() -- what a provider does at a connect: read the tokens
      local p = mcp.auth.provider({ server_url = url, redirect_url = "http://127.0.0.1:1/cb", store = s })
      return p:tokens()
    end
    mcp.spawn(function()
      assert.is_nil(connect())
      assert.is_nil(connect())
      assert.equals(1, runs(dir, "lookup")) -- "not stored" is kept too
      s:save(url, { tokens = { access_token = "at-1" } })
      assert.equals("at-1", connect().access_token)
      assert.equals("at-1", connect().access_token)
      local rec = s:load(url)
      rec.tokens.access_token = "changed by the caller"
      assert.equals("at-1", s:load(url).tokens.access_token) -- each load is a copy
    end)
    mcp.run()
    assert.equals(1, runs(dir, "lookup"))
    assert.equals(1, runs(dir, "store"))
    assert.equals("at-1", connect().access_token) -- outside a task as well
    assert.equals(1, runs(dir, "lookup"))
    -- another process's later save is seen by a new store object (this one answers from memory)
    local other = assert(mcp.auth.keyring_store({ tool = tool }))
    other:save(url, { tokens = { access_token = "at-2" } })
    assert.equals("at-1", s:load(url).tokens.access_token)
    assert.equals("at-2", assert(mcp.auth.keyring_store({ tool = tool })):load(url).tokens.access_token)
    -- delete forgets it: the next load runs the tool
    local before = runs(dir, "lookup")
    s:delete(url)
    assert.is_nil(s:load(url))
    assert.equals(before + 1, runs(dir, "lookup"))
  end)

  it("runs one operation at a time: a load started while a save runs waits for it and finds its record", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    touch(dir .. "/slow")
    local got
    mcp.spawn(function() s:save("k", { tokens = { access_token = "saved" } }) end)
    mcp.spawn(function() got = s:load("k") end)
    mcp.run()
    assert.equals("saved", got.tokens.access_token)
    assert.equals(0, runs(dir, "lookup"))
  end)

  it("close() kills a run in flight and leaves no child and no descriptor", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    local fds = open_fds()
    touch(dir .. "/hang")
    local rec, finished = "not yet", false
    mcp.spawn(function()
      rec = s:load("https://mcp.example/")
      finished = true
    end)
    assert.is_true(helper.wait_until(function() return helper.file_exists(dir .. "/pid") end, helper.ms(5000)))
    local pid = assert(tonumber(helper.read_file(dir .. "/pid")))
    s:close()
    assert.is_false(helper.proc_exists(pid)) -- killed and reaped at once
    mcp.run()
    assert.is_true(finished)
    assert.is_nil(rec)
    assert.equals(fds, open_fds())
  end)

  it("a helper thread that cannot start fails the load (kind unavailable), not kept; the task goes on", function()
    local dir, tool = fake()
    local url = "https://mcp.example/"
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    s:save(url, { tokens = { access_token = "at" } })
    local t = assert(mcp.auth.keyring_store({ tool = tool })) -- (a new store: nothing in memory)
    local fds = open_fds()
    local lookups = runs(dir, "lookup")
    local rec, err, finished
    mcp.core._fail_thread_starts(1)
    mcp.spawn(function()
      rec, err = t:load(url)
      finished = true
    end)
    mcp.run()
    mcp.core._fail_thread_starts(0)
    assert.is_true(finished) -- the task's wait was released
    assert.is_nil(rec)
    assert.equals("unavailable", err.kind)
    assert.truthy(err.message:find("cannot run " .. tool .. ": cannot start a helper thread: ", 1, true), err.message)
    assert.equals(lookups, runs(dir, "lookup")) -- no run
    assert.equals(fds, open_fds())
    -- not kept, and the store is not left busy: the next load (in a task) reads the record
    local _, got = in_task_counting(function() return t:load(url) end)
    assert.equals("at", got.tokens.access_token)
  end)

  it("a run in flight when the Lua state closes is killed and reaped", function()
    local dir, tool = fake()
    local script = dir .. "/t.lua"
    helper.write_file(script, ([[
      local mcp = require("mcp")
      local s = assert(mcp.auth.keyring_store({ tool = %q }))
      io.open(%q, "w"):close()
      mcp.spawn(function() s:load("https://mcp.example/") end)
      while not io.open(%q) do mcp.loop.step(20) end
      print("running")
    ]]):format(tool, dir .. "/hang", dir .. "/pid"))
    local p = io.popen(("LUA_PATH=%q LUA_CPATH=%q %s %s 2>&1"):format(package.path .. ";;", package.cpath .. ";;",
      helper.lua_cmd(), script))
    local out = p:read("*a")
    p:close()
    assert.equals("running\n", out)
    local pid = assert(tonumber(helper.read_file(dir .. "/pid")))
    assert.is_false(helper.proc_exists(pid))
  end)
end)

describe("mcp.auth.keyring_store: \"not stored\" only when the keyring is sure", function()
  teardown(helper.remove_tmpdirs)
  local url = "https://mcp.example/"

  it("a lookup that says nothing and a search that finds nothing: not stored, and kept", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    local rec, err = s:load(url)
    assert.is_nil(rec)
    assert.is_nil(err)
    assert.is_nil(s:load(url))
    assert.equals(1, runs(dir, "lookup"))
    assert.equals(1, runs(dir, "search"))
  end)

  it("an item the keyring did not unlock is an error, kept nowhere; no save overwrites it", function()
    local dir, tool = fake()
    assert(mcp.auth.keyring_store({ tool = tool })):save(url, { tokens = { access_token = "real" },
      client_information = { client_id = "c" } })
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    touch(dir .. "/locked") -- and its unlock prompt dismissed, or no prompter
    local rec, err = s:load(url)
    assert.is_nil(rec)
    assert.equals("unavailable", err and err.kind)
    assert.truthy(err.message:find("holds an item for this key but did not give its secret", 1, true), err.message)
    assert.is_nil(err.message:find("real", 1, true)) -- search's stdout is never quoted
    -- a provider's token save reads the record first: it fails rather than save over the real one
    local p = mcp.auth.provider({ server_url = url, redirect_url = "http://127.0.0.1:1/cb", store = s })
    local ok, perr = pcall(p.save_tokens, p, { access_token = "new" })
    assert.is_false(ok)
    assert.truthy(tostring(perr):find("the token store cannot be read", 1, true), tostring(perr))
    assert.equals(1, runs(dir, "store")) -- the first store's save only
    -- unlocked later: the next load asks again and finds it
    os.remove(dir .. "/locked")
    assert.equals("real", s:load(url).tokens.access_token)
    assert.equals("c", s:load(url).client_information.client_id)
  end)

  it("a search that cannot tell (no search command) is an error, not kept", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    touch(dir .. "/nosearch")
    local rec, err = s:load(url)
    assert.is_nil(rec)
    assert.equals("unavailable", err and err.kind)
    assert.truthy(err.message:find("search could not tell", 1, true), err.message)
    os.remove(dir .. "/nosearch")
    assert.is_nil(s:load(url))
    assert.equals(2, runs(dir, "lookup")) -- asked again
  end)

  it("a lookup that fails saying why is an error with its stderr, not kept", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    helper.write_file(tool, "#!/bin/sh\necho \"$1 $$\" >> '" .. dir .. "/log'\n"
      .. "echo 'secret-tool: Cannot autolaunch D-Bus without X11 $DISPLAY' >&2; exit 1\n")
    local rec, err = s:load(url)
    assert.is_nil(rec)
    assert.equals("unavailable", err and err.kind)
    assert.truthy(err.message:find("Cannot autolaunch D-Bus", 1, true), err.message)
    assert.is_nil(s:load(url))
    assert.equals(2, runs(dir, "lookup"))
    assert.equals(0, runs(dir, "search"))
  end)
end)

describe("mcp.auth.keyring_store: a delete is true only when the record is gone", function()
  teardown(helper.remove_tmpdirs)
  local url = "https://mcp.example/"

  it("a clear that fails is nil, err (kind unavailable); the record stays and the next load reads it", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    s:save(url, { tokens = { access_token = "kept" } })
    touch(dir .. "/clearfails")
    local ok, err = s:delete(url)
    assert.is_nil(ok)
    assert.equals("unavailable", err and err.kind)
    assert.equals("mcp.auth: mcp.auth.keyring_store(lua-mcp) cannot delete the record: secret-tool: Cannot delete: "
      .. "the prompt was dismissed", err.message)
    -- memory does not say it is gone: the load asks the keyring, which still holds it
    assert.equals("kept", s:load(url).tokens.access_token)
    assert.equals(1, runs(dir, "lookup"))
    os.remove(dir .. "/clearfails")
    assert.is_true(s:delete(url))
    assert.is_nil(s:load(url))
  end)

  it("a clear that exits 1 saying nothing: gone only when search lists no item", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    assert.is_true(s:delete(url)) -- never stored: clear says nothing, search finds nothing
    assert.equals(1, runs(dir, "search"))
    s:save(url, { tokens = { access_token = "kept" } })
    touch(dir .. "/clearsilent")
    local ok, err = s:delete(url)
    assert.is_nil(ok)
    assert.equals("unavailable", err and err.kind)
    assert.truthy(err.message:find("clear exited 1 saying nothing, and the item may still be there", 1, true),
      err.message)
    assert.is_nil(err.message:find("kept", 1, true)) -- search's stdout is never quoted
    assert.equals("kept", s:load(url).tokens.access_token)
  end)
end)

describe("mcp.auth.keyring_store: an operation started inside another one's wait", function()
  teardown(helper.remove_tmpdirs)
  local sched = require("mcp.sched")
  after_each(function() sched.block = sched.loop_block end)

  -- A host's blocking wait (mcp.nvim's vim.wait): while it waits, the host runs its own callbacks
  -- (here the ones queued in `host`, at the wait's start) on the same thread. It gives up after a
  -- bound, so a wait that could never end fails the spec instead of hanging it.
  local host = {}
  local function host_wait()
    sched.block = function(pred, ms)
      local cbs = host
      host = {}
      for _, cb in ipairs(cbs) do cb() end
      sched.loop_block(pred, ms or helper.ms(5000))
      if not pred() then error("the host's wait gave up: it waits for itself", 0) end
    end
  end

  it("a save from a host callback during a load fails at once with a clear error; the load goes on", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    host_wait()
    local got
    host[1] = function() got = { pcall(s.save, s, "k", { tokens = { access_token = "nested" } }) } end
    local ok, rec = pcall(s.load, s, "k")
    assert.is_true(ok, tostring(rec))
    assert.is_nil(rec) -- the load's own answer: nothing was stored
    assert.is_true(got[1], tostring(got[2]))
    assert.is_nil(got[2])
    assert.equals("busy", got[3].kind)
    assert.truthy(got[3].message:find("started while another operation of this store waits", 1, true), got[3].message)
    assert.equals(0, runs(dir, "store"))
    -- the store is not left busy: a later save and load run
    assert.is_true(s:save("k", { tokens = { access_token = "later" } }))
    assert.equals("later", s:load("k").tokens.access_token)
  end)

  it("a load answered from memory runs; one that needs the tool, and a delete, fail at once", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    s:save("known", { tokens = { access_token = "kept" } })
    host_wait()
    local known, unknown, deleted
    host[1] = function()
      known = s:load("known")
      unknown = { s:load("unknown") }
      deleted = { s:delete("known") }
    end
    assert.is_nil(s:load("k"))
    assert.equals("kept", known.tokens.access_token)
    assert.is_nil(unknown[1])
    assert.equals("busy", unknown[2].kind)
    assert.is_nil(deleted[1])
    assert.equals("busy", deleted[2].kind)
    assert.equals(1, runs(dir, "lookup")) -- the outer load's only
    assert.equals(0, runs(dir, "clear"))
  end)

  it("a save from a host callback while a load waits its turn behind a task fails at once", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    touch(dir .. "/slow")
    mcp.spawn(function() s:save("k", { tokens = { access_token = "from the task" } }) end)
    sched.run_ready() -- the task's save holds the store, its tool running
    host_wait()
    local got
    host[1] = function() got = { pcall(s.save, s, "k", { tokens = { access_token = "nested" } }) } end
    local ok, rec = pcall(s.load, s, "k") -- waits for the task's save
    assert.is_true(ok, tostring(rec))
    assert.equals("from the task", rec.tokens.access_token)
    assert.is_true(got[1], tostring(got[2]))
    assert.is_nil(got[2])
    assert.equals("busy", got[3].kind)
    assert.equals(1, runs(dir, "store"))
  end)

  -- The core loop's own blocking wait, bounded: a wait that could never end fails the spec.
  local function bounded_wait()
    sched.block = function(pred, ms)
      sched.loop_block(pred, ms or helper.ms(5000))
      if not pred() then error("the wait gave up: it waits for itself", 0) end
    end
  end

  -- A plain coroutine (not a task) outside any task blocks the OS thread when it waits, as the
  -- main thread does: an operation it starts during another one's blocking wait is nested.
  local function in_plain_coroutine(fn, ...)
    local co = coroutine.create(fn)
    local res = { coroutine.resume(co, ...) }
    assert.equals("dead", coroutine.status(co)) -- it waited in place, never yielded
    return res
  end

  it("plain Lua: a save in a plain coroutine (resumed by a task) during the main thread's wait fails at once", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    touch(dir .. "/slow")
    mcp.spawn(function() s:save("k", { tokens = { access_token = "from the task" } }) end)
    sched.run_ready() -- the task's save holds the store, its tool running
    local nested
    mcp.spawn(function()
      nested = in_plain_coroutine(function() return s:save("k", { tokens = { access_token = "nested" } }) end)
    end)
    bounded_wait()
    local ok, rec = pcall(s.load, s, "k") -- waits for the task's save; the second task runs meanwhile
    assert.is_true(ok, tostring(rec))
    assert.equals("from the task", rec.tokens.access_token)
    assert.is_true(nested[1], tostring(nested[2]))
    assert.is_nil(nested[2])
    assert.equals("busy", nested[3] and nested[3].kind)
    assert.equals(1, runs(dir, "store"))
  end)

  it("plain Lua: a save from a task's plain coroutine during a plain coroutine's wait fails at once", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    touch(dir .. "/slow")
    mcp.spawn(function() s:save("k", { tokens = { access_token = "from the task" } }) end)
    sched.run_ready()
    local nested
    mcp.spawn(function()
      nested = in_plain_coroutine(function() return s:save("k", { tokens = { access_token = "nested" } }) end)
    end)
    bounded_wait()
    local outer = in_plain_coroutine(function() return s:load("k") end)
    assert.is_true(outer[1], tostring(outer[2]))
    assert.equals("from the task", outer[2] and outer[2].tokens.access_token)
    assert.is_true(nested[1], tostring(nested[2]))
    assert.is_nil(nested[2])
    assert.equals("busy", nested[3] and nested[3].kind)
    assert.equals(1, runs(dir, "store"))
  end)

  it("plain Lua: a plain coroutine in a task, with no blocking wait under way, waits its turn", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    touch(dir .. "/slow")
    mcp.spawn(function() s:save("k", { tokens = { access_token = "from the task" } }) end)
    local got
    mcp.spawn(function() got = in_plain_coroutine(function() return s:load("k") end) end)
    bounded_wait()
    mcp.run()
    assert.is_true(got[1], tostring(got[2]))
    assert.equals("from the task", got[2] and got[2].tokens.access_token)
    assert.equals(1, runs(dir, "store"))
  end)

  it("a wait for the store's turn that raises (a host's wait interrupted) does not leave the store busy", function()
    local dir, tool = fake()
    local s = assert(mcp.auth.keyring_store({ tool = tool }))
    touch(dir .. "/slow")
    mcp.spawn(function() s:save("k", { tokens = { access_token = "from the task" } }) end)
    sched.run_ready() -- the task's save holds the store, its tool running
    sched.block = function() error("interrupted", 0) end
    local ok, err = pcall(s.load, s, "k")
    assert.is_false(ok)
    assert.equals("interrupted", err)
    sched.block = sched.loop_block
    mcp.run() -- the task's save ends
    os.remove(dir .. "/slow")
    host_wait() -- bounded: a store left busy fails here instead of hanging
    assert.equals("from the task", s:load("k").tokens.access_token)
    assert.is_true(s:save("k", { tokens = { access_token = "after" } }))
    assert.equals(2, runs(dir, "store")) -- the task's and this one
  end)
end)

describe("mcp.core.run_program_async (the keyring store's runs in a task)", function()
  teardown(helper.remove_tmpdirs)
  local core = mcp.core

  local function wait_for(pred)
    assert.is_true(helper.wait_until(pred, helper.ms(10000)))
  end

  it("reports what run_program returns, once, from a step; a dropped handle still reports", function()
    local got = {}
    assert(core.run_program_async({ "sh", "-c", "cat; echo oops >&2; exit 3" }, "in", 5000, function(r, err)
      got[#got + 1] = { r, err }
    end))
    collectgarbage("collect") -- the handle is kept alive while its program runs
    wait_for(function() return #got > 0 end)
    helper.drain()
    assert.equals(1, #got)
    assert.same({ status = 3, stdout = "in", stderr = "oops\n" }, got[1][1])
    local r
    local h = core.run_program_async({ "/nonexistent/program" }, nil, 5000, function(res) r = res end)
    wait_for(function() return r ~= nil end)
    assert.equals(127, r.status)
    assert.is_false(h:running())
  end)

  it("cancel() kills and reaps the program and calls fn(nil, err) at once; a timeout kills it too", function()
    local dir = helper.tmpdir()
    local prog = dir .. "/hang"
    helper.write_file(prog, "#!/bin/sh\necho $$ > \"$1.tmp\"; mv \"$1.tmp\" \"$1\"; exec sleep 30\n")
    assert(core.run_program({ "chmod", "+x", prog }))
    local calls, res, err = 0, nil, nil
    local h = assert(core.run_program_async({ prog, dir .. "/pid1" }, nil, 60000, function(a, b)
      calls, res, err = calls + 1, a, b
    end))
    wait_for(function() return helper.file_exists(dir .. "/pid1") end)
    assert.is_true(h:running())
    h:cancel()
    assert.equals(1, calls)
    assert.is_nil(res)
    assert.equals(prog .. " was cancelled", err)
    assert.is_false(h:running())
    assert.is_false(helper.proc_exists(tonumber(helper.read_file(dir .. "/pid1"))))
    h:cancel() -- again: nothing
    helper.drain()
    assert.equals(1, calls)
    local done
    core.run_program_async({ prog, dir .. "/pid2" }, nil, helper.ms(300), function(a, b) done = { a, b } end)
    wait_for(function() return done ~= nil end)
    assert.same({ nil, prog .. " timed out" }, done)
    assert.is_false(helper.proc_exists(tonumber(helper.read_file(dir .. "/pid2"))))
  end)
end)
