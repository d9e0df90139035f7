--- Where the Lua VM's instructions go, by Lua function and line: runs a script (by default the
--- benchmark driver) under a count hook that samples the running Lua function every STEP VM
--- instructions. C functions (the JSON codec, the loop, syscalls) are not seen: callgrind covers
--- them (bench/profile.sh). Used by `make bench-profile`.
---
---   lua5.4 bench/lua_vm_profile.lua SCRIPT ARGS...
---   (env LUA_VM_PROFILE_STEP, default 100; LUA_VM_PROFILE_TOP, default 25)
local step = tonumber(os.getenv("LUA_VM_PROFILE_STEP") or "") or 100
local top = tonumber(os.getenv("LUA_VM_PROFILE_TOP") or "") or 25
local script = assert(arg[1], "usage: lua_vm_profile.lua SCRIPT ARGS...")

local by_fn, by_line, total = {}, {}, 0
local getinfo = debug.getinfo
local function hook()
  local info = getinfo(2, "Sl")
  if not info then return end
  total = total + 1
  local fn = info.short_src .. ":" .. (info.linedefined or 0)
  by_fn[fn] = (by_fn[fn] or 0) + 1
  local line = info.short_src .. ":" .. (info.currentline or 0)
  by_line[line] = (by_line[line] or 0) + 1
end

-- Every coroutine needs the hook installed too (tasks run in coroutines).
local cocreate, cowrap = coroutine.create, coroutine.wrap
coroutine.create = function(f)
  local co = cocreate(f)
  debug.sethook(co, hook, "", step)
  return co
end
coroutine.wrap = function(f)
  local co = coroutine.create(f)
  return function(...)
    local r = table.pack(coroutine.resume(co, ...))
    if not r[1] then error(r[2], 0) end
    return table.unpack(r, 2, r.n)
  end
end
_ = cowrap

local new_arg = {}
for i = 1, #arg do new_arg[i - 1] = arg[i] end
arg = new_arg
local chunk = assert(loadfile(script))
debug.sethook(hook, "", step)
chunk(table.unpack(new_arg, 1, #new_arg))
debug.sethook()

local function report(title, t)
  local rows = {}
  for k, v in pairs(t) do rows[#rows + 1] = { k, v } end
  table.sort(rows, function(a, b) return a[2] > b[2] end)
  io.stderr:write(("\n%s (%d samples, one per %d VM instructions)\n"):format(title, total, step))
  for i = 1, math.min(top, #rows) do
    io.stderr:write(("%6.1f%%  %s\n"):format(100 * rows[i][2] / total, rows[i][1]))
  end
end
report("Lua VM instructions by function (file:line where defined)", by_fn)
report("Lua VM instructions by line", by_line)
