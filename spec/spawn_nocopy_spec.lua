-- Starting a process never copies the host (issue 28): every start path (a plain server, one with
-- a working directory, a sandboxed one, one after the core raised the fd limit, run_program,
-- spawn_detached) creates its child with clone(CLONE_VM | CLONE_VFORK), never fork(), whose cost
-- grows with the host's resident memory. Seen from outside with strace; Linux only. Under
-- valgrind such clones run as forks, so the check is left out there.
local helper = require("helper")
local mcp = require("mcp")

local function shq(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local STRACE = helper.strace()

local describe_traced = STRACE ~= nil and describe or pending

-- The fixture under strace with the soft fd limit at low: its output and the trace's lines.
local function traced(low, servers)
  local trace = os.tmpname()
  local cmd = ("ulimit -Sn %d; cd %s && LUA_PATH=%s LUA_CPATH=%s exec %s -f -o %s -e %s %s %s %d 2>&1"):format(
    low, shq(helper.root), shq(package.path .. ";;"), shq(package.cpath .. ";;"), STRACE, shq(trace),
    "trace=clone,clone3,fork,vfork,landlock_restrict_self,prlimit64,execve", helper.lua_cmd(),
    "spec/fixtures/spawn_trace.lua", servers)
  local f = assert(io.popen("sh -c " .. shq(cmd), "r"))
  local out = f:read("*a")
  f:close()
  local lines = {}
  for line in io.lines(trace) do lines[#lines + 1] = line end
  os.remove(trace)
  local r = { out = out, lines = lines }
  for k, v in out:gmatch("([%w_]+)=([^\n]*)") do
    if r[k] == nil then r[k] = v end
  end
  return r
end

describe_traced("starting a process", function()
  it("is a clone sharing the host's memory on every start path, the sandbox entered in the child", function()
    local LOW, N = 64, 30
    local r = traced(LOW, N)
    local host = r.lines[1] and r.lines[1]:match("^(%d+)")
    local spawns, copies, entered, restored = 0, {}, 0, 0
    for _, line in ipairs(r.lines) do
      local pid, call = line:match("^(%d+)%s+([%w_]+)%(")
      -- threads (a sanitizer's own) are no process starts
      if (call == "clone" or call == "clone3" or call == "fork" or call == "vfork")
        and not line:find("CLONE_THREAD") and not line:find("CLONE_UNTRACED") then
        spawns = spawns + 1
        if not (line:find("CLONE_VM") and line:find("CLONE_VFORK")) then copies[#copies + 1] = line end
      elseif call == "landlock_restrict_self" and pid ~= host and line:find("= 0") then
        entered = entered + 1
      elseif call == "prlimit64" and pid ~= host and line:find("RLIMIT_NOFILE, {rlim_cur=" .. LOW .. ",", 1, true) then
        restored = restored + 1
      end
    end
    assert.is_nil(r.error, r.out)
    local sandboxed = tonumber(r.sandbox_abi) > 0 and 1 or 0
    assert.are.equal(tostring(N + 1 + sandboxed), r.started, r.out)
    assert.are.equal("0", r.run_program, r.out)
    assert.are.equal("true", r.spawn_detached, r.out)
    -- the servers, run_program, and spawn_detached's intermediate and program
    assert.is_true(spawns >= N + 1 + sandboxed + 3, r.out .. table.concat(r.lines, "\n"))
    assert.are.same({}, copies)
    assert.are.equal(sandboxed, entered)
    -- the limit was raised, and the servers started after that got the host's back before exec
    assert.is_true(restored >= 1, r.out)
  end)
end)

-- A step that fails in the child reaches the parent: through the memory it shares with the child,
-- or through the report pipe where the clone ran as a fork (valgrind).
describe("a start whose child fails", function()
  local bad
  before_each(function() bad = helper.unrunnable_program() end)
  after_each(helper.remove_tmpdirs)

  it("fails with exec's error and leaves no child: a server, run_program, spawn_detached", function()
    local before = mcp.core.children()
    local t = mcp.stdio_transport({ command = bad, stderr = "discard" })
    local ok, err = t:start()
    assert.is_nil(ok)
    assert.are.equal(("cannot start '%s': Exec format error"):format(bad), err.message or err)
    t:close()
    assert.are.equal(before, mcp.core.children())
    local r = assert(mcp.core.run_program({ bad }))
    assert.are.equal(127, r.status)
    local done, why = mcp.core.spawn_detached({ bad })
    assert.is_nil(done)
    assert.are.equal(("cannot run %s: Exec format error"):format(bad), why)
  end)
end)
