-- Scale: many stdio servers (and programs run by core.run_program) in one process (the core raises
-- its soft fd limit when it runs out, or fails with an error naming the limit) and thousands of
-- calls in flight on one HTTP client (queued behind its connection bound). Counts, never timings:
-- the timings are bench/'s.
local mcp = require("mcp")
local helper = require("helper")
local bounds = require("hostile.bounds")

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function have_proc_limits()
  local f = io.open("/proc/self/limits", "r")
  if f then f:close() end
  return f ~= nil
end

--- The hard limit on open files of a shell started from here.
local function hard_limit()
  local f = io.popen("sh -c 'ulimit -Hn'")
  local out = f:read("*a")
  f:close()
  if out:match("unlimited") then return math.huge end
  return tonumber(out:match("%d+"))
end

-- A child Lua (the interpreter and module path of this run) starts n transports of `cat` under
-- the given `ulimit` settings, then reports: how many started, its own soft/hard limits after,
-- the first error, and (when asked) the soft limit a server started last sees.
local CHILD = [[
local n, probe = tonumber(arg[1]), arg[2]
local mcp = require("mcp")
local T = require("mcp.transport")
local function limits()
  local f = assert(io.open("/proc/self/limits", "r"))
  local s = f:read("*a")
  f:close()
  local soft, hard = s:match("Max open files%s+(%S+)%s+(%S+)")
  return soft, hard
end
local ts, errs = {}, {}
for _ = 1, n do
  local t = mcp.stdio_transport({ command = "cat", stderr = "discard" })
  local ok, err = T.start(t)
  if ok then ts[#ts + 1] = t else errs[#errs + 1] = err end
end
local soft, hard = limits()
print("started=" .. #ts)
print("soft=" .. soft)
print("hard=" .. hard)
if errs[1] then
  print("kind=" .. tostring(errs[1].kind))
  print("err=" .. tostring(errs[1]))
end
if probe ~= "-" then
  local t = mcp.stdio_transport({ command = "sh", args = { "-c", "ulimit -Sn > " .. probe .. "; exec cat" },
    stderr = "discard" })
  assert(T.start(t))
  ts[#ts + 1] = t
  for _ = 1, 200 do
    local f = io.open(probe, "r")
    local v = f and f:read("*l")
    if f then f:close() end
    if v and v ~= "" then
      print("child_soft=" .. v)
      break
    end
    os.execute("sleep 0.05")
  end
end
-- it goes on: after closing some, another server starts
for i = 1, math.min(#ts, 8) do T.close(ts[i], 0) end
local t = mcp.stdio_transport({ command = "cat", stderr = "discard" })
print("again=" .. tostring(T.start(t) == true))
T.close(t, 0)
for i = 9, #ts do T.close(ts[i], 0) end
]]

-- A child Lua (the interpreter and module path of this run) runs the script text with the
-- arguments under the given `ulimit` settings: its output (stdout and stderr).
local function run_lua(ulimit, text, ...)
  local script = os.tmpname()
  helper.write_file(script, text)
  local args = {}
  for i = 1, select("#", ...) do args[i] = shq(select(i, ...)) end
  local cmd = ("%s; LUA_PATH=%s LUA_CPATH=%s exec %s %s %s 2>&1"):format(ulimit, shq(package.path .. ";;"),
    shq(package.cpath .. ";;"), helper.lua_cmd(), shq(script), table.concat(args, " "))
  local f = assert(io.popen("sh -c " .. shq(cmd), "r"))
  local out = f:read("*a")
  f:close()
  os.remove(script)
  return out
end

-- The child's `name=value` lines (the first of each name), and out = all of its output.
local function fields(out)
  local r = { out = out }
  for k, v in out:gmatch("([%w_]+)=([^\n]*)") do
    if r[k] == nil then r[k] = v end
  end
  return r
end

local function run_child(ulimit, n, probe) return fields(run_lua(ulimit, CHILD, n, probe or "-")) end

-- A child Lua with the soft limit at LOW starts one server from a task (mcp.spawn) at a time,
-- each with all but k descriptors in use (k = 0..8: files opened until EMFILE, then k closed),
-- so that every descriptor the start makes meets the limit in turn: the stdio pipes, and those
-- of the start on its helper thread (spawn_job.c). It reports each start's result.
local TASK_CHILD = [[
local mcp = require("mcp")
mcp.stdio_transport({ command = "cat" }) -- its modules loaded while files can still be opened
for k = 0, 8 do
  local held = {}
  while true do
    local f = io.open("/dev/null", "r")
    if not f then break end
    held[#held + 1] = f
  end
  for _ = 1, k do table.remove(held):close() end
  local t = mcp.stdio_transport({ command = "cat", stderr = "discard" })
  local res
  mcp.spawn(function() res = { t:start() } end)
  mcp.run()
  for _, f in ipairs(held) do f:close() end
  print(("start%d=%s %s"):format(k, tostring(res and res[1]), tostring(res and res[2])))
  t:close(0)
end
]]

-- A child Lua runs `true` with core.run_program (mode "sync") or core.run_program_async ("async",
-- its end reported by core.step) once for each k from arg[2] to arg[3], with all but k descriptors
-- in use (files opened until EMFILE, then k closed), so that every descriptor a run makes meets
-- the limit in turn: its three pipes, its start's report pipe and, for a run on a helper thread,
-- the wake and cancel pipes. For each run it reports the result and how many descriptors were free
-- after it (k when the run left none open). With arg[4] (a run's need), it then runs a program
-- that is missing and one that cannot be executed with just that many free, each reported so too.
-- Last, the soft limit a program it runs sees, and its own.
local RUN_CHILD = [[
local mode, first, last, need = arg[1], tonumber(arg[2]), tonumber(arg[3]), tonumber(arg[4])
local core = require("mcp").core
local function run(argv)
  if mode == "sync" then return core.run_program(argv, nil, 10000) end
  local res
  local h, err = core.run_program_async(argv, nil, 10000, function(...) res = { ... } end)
  if not h then return nil, err end
  while res == nil do core.step(1000) end
  return res[1], res[2]
end
local function fill()
  local held = {}
  while true do
    local f = io.open("/dev/null", "r")
    if not f then return held end
    held[#held + 1] = f
  end
end
local function close_all(files)
  for _, f in ipairs(files) do f:close() end
end
local function run_at(name, k, argv)
  local held = fill()
  for _ = 1, k do table.remove(held):close() end
  local r, err = run(argv)
  local free = fill()
  print(("%s=%s %s free=%d"):format(name, tostring(r and r.status), tostring(err), #free))
  close_all(free)
  close_all(held)
end
for k = first, last do run_at("run" .. k, k, { "true" }) end
if need then
  local bad = os.tmpname() -- not a program: execve fails with ENOEXEC
  local f = assert(io.open(bad, "wb"))
  f:write("\0\1\2\3 not a program\n")
  f:close()
  os.execute("chmod +x '" .. bad .. "'")
  run_at("missing", need, { "/nonexistent/program" })
  run_at("noexec", need, { bad })
  os.remove(bad)
end
local r, err = run({ "sh", "-c", "ulimit -Sn" })
print("child_soft=" .. tostring(r and r.stdout:match("%S+") or err))
local f = assert(io.open("/proc/self/limits", "r"))
print("soft=" .. f:read("*a"):match("Max open files%s+(%S+)"))
f:close()
]]

-- A child Lua starts `true` with core.spawn_detached (the browser opener) once for each k from
-- arg[1] to arg[2], with all but k descriptors in use (files opened until EMFILE, then k closed), so
-- that each descriptor of the start meets the limit in turn: /dev/null (the program's 0-2) and the
-- start's report pipe. For each start it reports the result and how many descriptors were free
-- after it (k when the start left none open). With arg[3] (a start's need), it then starts a file
-- that cannot be executed with just that many free. Last, the soft limit a program it starts sees
-- (written to the file arg[4]), and its own.
local DETACHED_CHILD = [[
local first, last, need, probe = tonumber(arg[1]), tonumber(arg[2]), tonumber(arg[3]), arg[4]
local core = require("mcp").core
local function fill()
  local held = {}
  while true do
    local f = io.open("/dev/null", "r")
    if not f then return held end
    held[#held + 1] = f
  end
end
local function close_all(files)
  for _, f in ipairs(files) do f:close() end
end
local function start_at(name, k, argv)
  local held = fill()
  for _ = 1, k do table.remove(held):close() end
  local ok, err = core.spawn_detached(argv)
  local free = fill()
  print(("%s=%s %s free=%d"):format(name, tostring(ok), tostring(err), #free))
  close_all(free)
  close_all(held)
end
for k = first, last do start_at("start" .. k, k, { "true" }) end
if need > 0 then
  local bad = os.tmpname() -- not a program: execve fails with ENOEXEC
  local f = assert(io.open(bad, "wb"))
  f:write("\0\1\2\3 not a program\n")
  f:close()
  os.execute("chmod +x '" .. bad .. "'")
  start_at("noexec", need, { bad })
  os.remove(bad)
end
assert(core.spawn_detached({ "sh", "-c", 'ulimit -Sn > "$1.tmp" && mv "$1.tmp" "$1"', "sh", probe }))
for _ = 1, 400 do
  local f = io.open(probe, "r")
  local v = f and f:read("*l")
  if f then f:close() end
  if v and v ~= "" then
    print("child_soft=" .. v)
    break
  end
  os.execute("sleep 0.05")
end
local f = assert(io.open("/proc/self/limits", "r"))
print("soft=" .. f:read("*a"):match("Max open files%s+(%S+)"))
f:close()
]]

local describe_linux = have_proc_limits() and describe or pending

describe_linux("file descriptor limit", function()
  -- Each `cat` holds at least 3 descriptors here (its stdin and stdout pipes, a pidfd or the
  -- exec report), so 40 of them need more than 64.
  local N, LOW = 40, 64

  it("raises the soft limit toward the hard one when starting a server runs out of descriptors", function()
    local hard = hard_limit()
    if hard == nil or hard < 4 * LOW then
      pending("the hard limit (" .. tostring(hard) .. ") leaves no room to raise")
      return
    end
    local probe = os.tmpname()
    local r = run_child("ulimit -Sn " .. LOW, N, probe)
    os.remove(probe)
    assert.are.equal(tostring(N), r.started, r.out)
    local soft = tonumber(r.soft)
    assert.is_true(soft ~= nil and soft > LOW, r.out)
    assert.is_true(hard == math.huge or soft <= hard, r.out)
    -- a server started after the raise gets the limit the host had
    assert.are.equal(tostring(LOW), r.child_soft, r.out)
    assert.are.equal("true", r.again, r.out)
    assert.is_nil(r.err, r.out)
  end)

  it("raises it for a start from a task too, whichever of its descriptors meets the limit", function()
    local hard = hard_limit()
    if hard == nil or hard < 64 * LOW then
      pending("the hard limit (" .. tostring(hard) .. ") leaves no room to raise")
      return
    end
    local out = run_lua("ulimit -Sn " .. LOW, TASK_CHILD)
    for k = 0, 8 do
      assert.truthy(out:find(("start%d=true nil\n"):format(k), 1, true), out)
    end
  end)

  -- A run needs 8 descriptors (three pipes and the start's report pipe), one on a helper thread 12
  -- (and its wake and cancel pipes): k = 0 .. 7 and 0 .. 11 leave too few, each at another pipe.
  local RUN_NEEDS = { sync = 8, async = 12 }

  it("raises it for core.run_program and run_program_async, whichever of a run's descriptors meets it", function()
    local hard = hard_limit()
    if hard == nil or hard < 4 * LOW then
      pending("the hard limit (" .. tostring(hard) .. ") leaves no room to raise")
      return
    end
    for _, mode in ipairs({ "sync", "async" }) do
      for k = 0, RUN_NEEDS[mode] - 1 do
        local r = fields(run_lua("ulimit -Sn " .. LOW, RUN_CHILD, mode, k, k))
        assert.truthy(r.out:find(("run%d=0 nil "):format(k), 1, true), mode .. "\n" .. r.out)
        assert.is_true(tonumber(r.soft) ~= nil and tonumber(r.soft) > LOW, mode .. "\n" .. r.out)
        -- a program run after the raise gets the limit the host had
        assert.are.equal(tostring(LOW), r.child_soft, mode .. "\n" .. r.out)
      end
    end
  end)

  it("at the hard limit, a run fails naming both limits, leaves no descriptor open, and goes on", function()
    for _, mode in ipairs({ "sync", "async" }) do
      local need = RUN_NEEDS[mode]
      local out = run_lua("ulimit -n " .. LOW, RUN_CHILD, mode, 0, need - 1, need)
      for k = 0, need - 1 do
        local line = ("run%d=nil cannot run true: out of file descriptors (soft limit %d, hard %d) free=%d\n"):format(k,
          LOW, LOW, k)
        assert.truthy(out:find(line, 1, true), mode .. ": " .. line .. out)
      end
      -- a program that cannot run (its start fails after every descriptor was made) leaves none open
      for _, name in ipairs({ "missing", "noexec" }) do
        local line = ("%s=127 nil free=%d\n"):format(name, need)
        assert.truthy(out:find(line, 1, true), mode .. ": " .. line .. out)
      end
      local r = fields(out)
      assert.are.equal(tostring(LOW), r.child_soft, mode .. "\n" .. out) -- with descriptors free, it runs
      assert.are.equal(tostring(LOW), r.soft, mode .. "\n" .. out)
    end
  end)

  -- A detached start needs 3 descriptors (/dev/null and the report pipe): k = 0 .. 2 leave too few.
  local DETACHED_NEEDS = 3

  local function detached_child(ulimit, first, last, need)
    local probe = os.tmpname()
    os.remove(probe)
    local out = run_lua(ulimit, DETACHED_CHILD, first, last, need, probe)
    os.remove(probe)
    return out
  end

  it("raises it for core.spawn_detached, whichever of the start's descriptors meets it", function()
    local hard = hard_limit()
    if hard == nil or hard < 4 * LOW then
      pending("the hard limit (" .. tostring(hard) .. ") leaves no room to raise")
      return
    end
    for k = 0, DETACHED_NEEDS - 1 do
      local r = fields(detached_child("ulimit -Sn " .. LOW, k, k, 0))
      assert.truthy(r.out:find(("start%d=true nil "):format(k), 1, true), r.out)
      assert.is_true(tonumber(r.soft) ~= nil and tonumber(r.soft) > LOW, r.out)
      -- a program started after the raise gets the limit the host had
      assert.are.equal(tostring(LOW), r.child_soft, r.out)
    end
  end)

  it("at the hard limit, core.spawn_detached fails naming both limits, leaves no descriptor open, and goes on", function()
    local out = detached_child("ulimit -n " .. LOW, 0, DETACHED_NEEDS - 1, DETACHED_NEEDS)
    for k = 0, DETACHED_NEEDS - 1 do
      local line = ("start%d=nil cannot run true: out of file descriptors (soft limit %d, hard %d) free=%d\n"):format(k,
        LOW, LOW, k)
      assert.truthy(out:find(line, 1, true), line .. out)
    end
    -- a file that cannot be executed (its start fails after every descriptor was made) leaves none open
    assert.truthy(out:find(("noexec=nil cannot run [^\n]+: Exec format error free=%d\n"):format(DETACHED_NEEDS)), out)
    local r = fields(out)
    assert.are.equal(tostring(LOW), r.child_soft, out) -- with descriptors free, it starts
    assert.are.equal(tostring(LOW), r.soft, out)
  end)

  it("at the hard limit, fails with a transport error naming both limits, and goes on", function()
    local r = run_child("ulimit -n " .. LOW, N)
    local started = tonumber(r.started)
    assert.is_true(started ~= nil and started > 0 and started < N, r.out)
    assert.are.equal("transport", r.kind, r.out)
    assert.truthy(helper.has(r.err, ("cannot start 'cat': out of file descriptors (soft limit %d, hard %d)"):format(LOW,
      LOW)), r.out)
    assert.are.equal(tostring(LOW), r.soft, r.out) -- nothing to raise: the limit is unchanged
    assert.are.equal("true", r.again, r.out)
  end)
end)

local describe_node = bounds.have_node() and describe or pending

describe_node("thousands of calls in flight on one HTTP client", function()
  local srv

  setup(function() srv = bounds.start_http() end)
  teardown(function()
    bounds.stop_http(srv)
    assert.are.equal(0, bounds.reap_all())
  end)

  --- n calls at once on a new client of a fresh server (libcurl keeps the connections of earlier
  --- clients for reuse); returns how many succeeded, the most in flight at once, and the
  --- connections the server accepted (one more is the /state request's own).
  local function flood(n, opts)
    local own = bounds.start_http()
    local c = assert(bounds.http(own, "plain", opts))
    local before = bounds.http_state(own).connections
    local ok, inflight, most, errs = 0, 0, 0, {}
    for _ = 1, n do
      mcp.spawn(function()
        inflight = inflight + 1
        if inflight > most then most = inflight end
        local res, err = c:call_tool("x", {})
        inflight = inflight - 1
        if res and res.content[1].text == "ok" then ok = ok + 1 else errs[#errs + 1] = tostring(err) end
      end)
    end
    mcp.run()
    local accepted = bounds.http_state(own).connections - before
    c:close()
    bounds.stop_http(own)
    return ok, most, accepted, errs
  end

  it("3,000 calls at once all complete over at most max_connections connections (default 64)", function()
    local ok, most, accepted, errs = flood(3000)
    assert.are.equal(3000, ok, errs[1])
    assert.are.equal(3000, most) -- they really were in flight together
    -- 64 for the calls, plus the GET stream's attempt; not one per call
    assert.is_true(accepted >= 2 and accepted <= 64 + 2, "connections accepted: " .. accepted)
  end)

  it("max_connections = 4: 2,000 calls at once complete over at most 4 (+ the GET stream) connections", function()
    local ok, most, accepted, errs = flood(2000, { max_connections = 4 })
    assert.are.equal(2000, ok, errs[1])
    assert.are.equal(2000, most)
    assert.is_true(accepted >= 2 and accepted <= 4 + 2, "connections accepted: " .. accepted)
  end)

  it("a call waiting for a connection times out in the queue and is never sent", function()
    local c = assert(bounds.http(srv, "idle", { max_connections = 1 }))
    local function calls_seen()
      local n = 0
      for _, r in ipairs(bounds.http_state(srv).requests) do
        if r.path == "/idle" and r.rpc == "tools/call" then n = n + 1 end
      end
      return n
    end
    local before = calls_seen()
    local results = {}
    -- the first holds the only connection (the idle server never answers); the second waits
    mcp.spawn(function() results[1] = { c:call_tool("x", {}, { timeout_ms = helper.ms(1500) }) } end)
    mcp.spawn(function() results[2] = { c:call_tool("x", {}, { timeout_ms = helper.ms(300) }) } end)
    mcp.run()
    assert.are.equal("timeout", results[1][2].kind)
    assert.are.equal("timeout", results[2][2].kind)
    assert.are.equal(1, calls_seen() - before) -- the server saw the first call only
    c:close()
  end)

  it("max_connections must be an integer from 1 to 65536", function()
    for _, bad in ipairs({ 0, -1, 1.5, "8", 65537 }) do
      assert.has_error(function() mcp.http_transport({ url = srv.base .. "/plain", max_connections = bad }) end,
        "mcp: max_connections must be an integer from 1 to 65536")
    end
  end)
end)
