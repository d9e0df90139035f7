-- Shared helpers of the lua-mcp specs: `local helper = require("helper")`.
--
-- helper.root                      absolute path of the repository root (no trailing slash)
-- helper.lua_cmd()                 interpreter for the Lua test servers (env MCP_TEST_LUA, default lua5.4)
-- helper.slow()                    timeout multiplier: 10 under sanitizers/valgrind (MCP_TEST_SANITIZER), else 1
-- helper.ms(n)                     n * helper.slow()
-- helper.test_server(args, opts)   client connected to spec/fixtures/test_server.lua <args...> (or nil, err)
-- helper.example_server(opts)      client connected to examples/servers/example_server.lua (or nil, err)
-- helper.proc_exists(pid)          true while /proc/<pid> exists, zombies included; second value: state letter
-- helper.wait_until(pred, ms)      step the loop until pred() holds or ms elapse; returns pred()
-- helper.read_file(path)           the whole file (raises when it cannot be read); helper.file_exists(path)
-- helper.in_path(cmd)              absolute path of cmd on PATH, or nil
-- helper.track(c)                  close c after the test: a file that tracks runs after_each(helper.close_tracked)
-- helper.sh(cmd)                  a shell command's stdout (without LD_PRELOAD under sanitizers)
-- helper.kill(pid, sig)            kill(1) a process; helper.wait_dead(pid, ms): until zombie or gone
-- helper.tmpdir()                 a new 0700 directory; helper.remove_tmpdirs() removes them all
-- helper.unrunnable_program()      an executable file exec cannot run (ENOEXEC), in a helper.tmpdir()
-- helper.strace()                  the command running strace here (ASan-aware), or nil when it cannot
local mcp = require("mcp")

local helper = {}

local function dirname(p)
  return (p:match("^(.*)/[^/]*$")) or "."
end

local function file_exists(path)
  local fh = io.open(path, "rb")
  if fh then fh:close() end
  return fh ~= nil
end

-- p relative to the current directory -> absolute. $PWD when it is the current directory
-- (it holds p), else `pwd`.
local function absolute(p)
  if p:sub(1, 1) == "/" then return p end
  p = p:gsub("^%./", "")
  local cwd = os.getenv("PWD")
  if cwd == nil or cwd == "" or not file_exists(cwd .. "/" .. p) then
    local fh = io.popen("pwd")
    cwd = fh and fh:read("*l") or "."
    if fh then fh:close() end
  end
  return cwd .. "/" .. p
end

do
  local src = debug.getinfo(1, "S").source
  src = src:sub(1, 1) == "@" and src:sub(2) or "spec/helper.lua"
  local root = dirname(dirname(absolute(src)))
  root = root:gsub("/%./", "/"):gsub("/%.$", "")
  helper.root = root
end

helper.fixtures = helper.root .. "/spec/fixtures"
helper.test_server_path = helper.fixtures .. "/test_server.lua"
helper.example_server_path = helper.root .. "/examples/servers/example_server.lua"

--- Interpreter used to run the Lua test servers.
function helper.lua_cmd()
  local v = os.getenv("MCP_TEST_LUA")
  if v == nil or v == "" then return "lua5.4" end
  return v
end

--- Name of the sanitizer the suite runs under (asan, valgrind) or nil.
function helper.sanitizer()
  local v = os.getenv("MCP_TEST_SANITIZER")
  if v == nil or v == "" then return nil end
  return v
end

--- Multiplier for timeouts and time bounds: everything is 5-20x slower under sanitizers.
function helper.slow()
  return helper.sanitizer() and 10 or 1
end

function helper.ms(n)
  return n * helper.slow()
end

local function merged(defaults, opts)
  local t = {}
  for k, v in pairs(defaults) do t[k] = v end
  for k, v in pairs(opts or {}) do t[k] = v end
  return t
end

--- Start spec/fixtures/test_server.lua with the extra CLI args and connect to it.
--- Defaults: stderr = "discard" (the server logs to stderr), request_timeout_ms = 30 s (x slow).
---@param args string[]|nil
---@param opts table|nil create_stdio_client opts
---@return table|nil client, table|nil err
function helper.test_server(args, opts)
  local argv = { helper.test_server_path }
  for _, a in ipairs(args or {}) do argv[#argv + 1] = a end
  opts = merged({ stderr = "discard", request_timeout_ms = helper.ms(30000) }, opts)
  return mcp.create_stdio_client(helper.lua_cmd(), argv, opts)
end

--- Start examples/servers/example_server.lua and connect to it.
function helper.example_server(opts)
  opts = merged({ stderr = "discard", request_timeout_ms = helper.ms(30000) }, opts)
  return mcp.create_stdio_client(helper.lua_cmd(), { helper.example_server_path }, opts)
end

--- Whether process pid exists. A zombie exists (and is bad: nobody reaped it); the second
--- result is the state letter from /proc/<pid>/stat ("Z" for a zombie).
---@param pid integer
---@return boolean, string|nil
function helper.proc_exists(pid)
  assert(type(pid) == "number", "proc_exists: pid expected")
  local fh = io.open(("/proc/%d/stat"):format(pid), "r")
  if fh == nil then return false end
  local stat = fh:read("*a")
  fh:close()
  if stat == nil or stat == "" then return false end
  -- pid (comm) state ...; comm may hold spaces or parentheses: take the last ')'.
  local state = stat:match("^.*%)%s+(%S)")
  return true, state
end

--- Run a shell command and return its standard output. Under sanitizers the shell would inherit
--- LD_PRELOAD: the command runs through `env -u LD_PRELOAD`.
---@param cmd string
---@return string
function helper.sh(cmd)
  local prefix = helper.sanitizer() and "env -u LD_PRELOAD " or ""
  local f = assert(io.popen(prefix .. cmd, "r"))
  local out = f:read("*a")
  f:close()
  return out
end

--- Send signal sig (default KILL) to pid with kill(1). Under sanitizers the shell would inherit
--- LD_PRELOAD: the command runs through `env -u LD_PRELOAD`.
function helper.kill(pid, sig)
  local prefix = helper.sanitizer() and "env -u LD_PRELOAD " or ""
  return os.execute(("%skill -%s %d"):format(prefix, sig or "KILL", pid))
end

--- Wait (without running the mcp loop) until pid is a zombie or gone, up to ms. Returns the state.
function helper.wait_dead(pid, ms)
  local deadline = mcp.core.now_ms() + ms
  repeat
    local exists, state = helper.proc_exists(pid)
    if not exists then return "gone" end
    if state == "Z" then return "Z" end
  until mcp.core.now_ms() > deadline
  return select(2, helper.proc_exists(pid))
end

--- fn() in a task while another task counts the loop's rounds (a tick_ms sleep each, default 5),
--- under mcp.run(): how many rounds ran while fn ran (0 when fn held the host's thread), and
--- fn's results.
function helper.in_task_counting(fn, tick_ms)
  local ticks, done, during, res = 0, false, nil, nil
  mcp.spawn(function()
    while not done do
      mcp.sleep(tick_ms or 5)
      ticks = ticks + 1
    end
  end)
  mcp.spawn(function()
    local before = ticks
    res = { fn() }
    during = ticks - before
    done = true
  end)
  mcp.run()
  return during, (table.unpack or unpack)(res)
end

--- Step the loop until pred() holds or ms elapse (outside tasks). Returns pred().
function helper.wait_until(pred, ms)
  local deadline = mcp.core.now_ms() + ms
  while not pred() and mcp.core.now_ms() < deadline do
    mcp.loop.step(20)
  end
  return pred() and true or false
end

--- Let the queued tasks (handlers) run: a few zero-timeout steps.
function helper.drain(n)
  for _ = 1, n or 5 do mcp.loop.step(0) end
end

--- Whether path can be opened for reading.
---@param path string
---@return boolean
helper.file_exists = file_exists

--- The whole file at path; raises when it cannot be read.
---@param path string
---@return string
function helper.read_file(path)
  local fh = assert(io.open(path, "rb"))
  local s = fh:read("*a")
  fh:close()
  return s
end

--- The absolute path of command cmd in a directory of $PATH, or nil.
---@param cmd string
---@return string|nil
function helper.in_path(cmd)
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    if file_exists(dir .. "/" .. cmd) then return dir .. "/" .. cmd end
  end
end

-- What helper.track keeps until helper.close_tracked.
local tracked = {}

--- Close c (a client, or anything with :close()) after the running test, with the others tracked.
--- busted keeps one finally() per test (a second call replaces the first, and what the first would
--- have closed stays open): a spec file whose tests start more than one client, or that has a
--- finally() of its own, tracks them here and runs `after_each(helper.close_tracked)` at its top.
---@generic T
---@param c T
---@return T c
function helper.track(c)
  tracked[#tracked + 1] = c
  return c
end

--- Close what helper.track kept, the last first.
function helper.close_tracked()
  for i = #tracked, 1, -1 do
    local c = tracked[i]
    tracked[i] = nil
    c:close()
  end
end

-- The directories helper.tmpdir made, until helper.remove_tmpdirs.
local tmpdirs = {}

--- A new empty directory (mode 0700) under the system's temporary directory. A spec file that
--- makes them removes them, with what they hold, by `teardown(helper.remove_tmpdirs)` (or
--- `after_each`) at its top.
---@return string path
function helper.tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(mcp.core.mkdir_private(d))
  tmpdirs[#tmpdirs + 1] = d
  return d
end

--- An executable file in a new helper.tmpdir() that no exec can run (no format the kernel knows:
--- execve fails with ENOEXEC), for the specs of a failed start.
---@return string path
function helper.unrunnable_program()
  local path = helper.tmpdir() .. "/not-a-program"
  helper.write_file(path, "\127ELF but not really\n")
  assert(mcp.core.run_program({ "chmod", "+x", path }, nil, 10000))
  return path
end

--- The command that runs strace here, or nil when it cannot trace (not installed, valgrind).
--- Under ASan the traced Lua needs the preloaded runtime and strace must not get it (it fails):
--- strace runs without it and hands it to the traced program (-E); the leak check, which cannot
--- work under ptrace, is off there.
---@return string|nil
function helper.strace()
  if helper.sanitizer() == "valgrind" or not helper.in_path("strace") then return nil end
  local preload = os.getenv("LD_PRELOAD")
  local cmd = preload and ("env -u LD_PRELOAD ASAN_OPTIONS=detect_leaks=0 strace -E LD_PRELOAD='%s'"):format(
    (preload:gsub("'", "'\\''"))) or "strace"
  local f = assert(io.popen(cmd .. " -f -o /dev/null true 2>/dev/null && echo ok"))
  local out = f:read("*a")
  f:close()
  return out:find("ok") ~= nil and cmd or nil
end

--- Remove the directories helper.tmpdir made (rm -rf).
function helper.remove_tmpdirs()
  for i = #tmpdirs, 1, -1 do
    mcp.core.run_program({ "rm", "-rf", "--", tmpdirs[i] }, nil, 10000)
    tmpdirs[i] = nil
  end
end

function helper.write_file(path, text)
  local fh = assert(io.open(path, "wb"))
  fh:write(text)
  fh:close()
end

--- Whether a command is on PATH. (`command` is a shell builtin, so no `env -u LD_PRELOAD` prefix.)
function helper.have_command(name)
  local f = assert(io.popen("command -v " .. name .. " 2>/dev/null", "r"))
  local out = f:read("*a")
  f:close()
  return out ~= ""
end

--- Does string s contain the plain substring sub?
function helper.has(s, sub)
  return type(s) == "string" and s:find(sub, 1, true) ~= nil
end

--- Whether the errors reported (an on_error list) hold the OAuth layer's "login_required".
function helper.login_required_reported(reports)
  for _, e in ipairs(reports) do
    if type(e) == "table" and e.oauth_error == "login_required" then return true end
  end
  return false
end

return helper
