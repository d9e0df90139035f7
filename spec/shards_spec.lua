-- scripts/shards.sh (make memcheck MEMCHECK_SHARDS=N): the spec files of SPEC split over N
-- processes of a command. A shard with no file must not run the command (busted given no file
-- runs its default ROOT, the whole suite, under valgrind), and a SPEC path that does not exist
-- fails as busted fails on it, instead of running nothing or everything.
local helper = require("helper")

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- shards.sh n spec -- (a command that prints the files it was given); returns rc, output. Without
-- the sanitizer's LD_PRELOAD (make asan): it would report bash's own leaks and fail the script.
local function shards(n, spec, weights)
  local cmd = ("cd %s && env -u LD_PRELOAD SHARD_WEIGHTS=%s bash scripts/shards.sh %d %s -- sh -c 'echo \"RUN:[$*]\"' sh 2>&1;"
    .. " echo \"rc=$?\""):format(sh_quote(helper.root), sh_quote(weights or ""), n, sh_quote(spec))
  local p = io.popen(cmd)
  local out = p:read("*a")
  p:close()
  return tonumber(out:match("rc=(%d+)\n?$")), out
end

local function runs(out)
  local list = {}
  for files in out:gmatch("RUN:%[([^%]]*)%]") do list[#list + 1] = files end
  return list
end

describe("scripts/shards.sh", function()
  it("splits the spec files over the shards, each file run once", function()
    local rc, out = shards(2, "spec/json_spec.lua spec/options_spec.lua spec/canonical_spec.lua")
    assert.equal(0, rc, out)
    local seen = {}
    for _, files in ipairs(runs(out)) do
      for f in files:gmatch("%S+") do
        assert.is_nil(seen[f], out)
        seen[f] = true
      end
    end
    assert.same({ ["spec/json_spec.lua"] = true, ["spec/options_spec.lua"] = true, ["spec/canonical_spec.lua"] = true },
      seen)
    assert.equal(2, #runs(out), out)
  end)

  it("runs no command for a shard left with no file (busted would run its whole default ROOT)", function()
    local rc, out = shards(3, "spec/json_spec.lua")
    assert.equal(0, rc, out)
    assert.same({ "spec/json_spec.lua" }, runs(out))
  end)

  it("fails on a SPEC path that does not exist, running nothing", function()
    local rc, out = shards(2, "spec/json_spec.lua spec/no_such_spec.lua")
    assert.is_true(rc ~= 0, out)
    assert.matches("no_such_spec.lua", out, 1, true)
    assert.same({}, runs(out))
  end)

  it("deals the files by their measured times (SHARD_WEIGHTS), not by their size, when they are known", function()
    -- by size, client_spec (the largest) goes alone; the times say json_spec costs most
    local spec = "spec/client_spec.lua spec/options_spec.lua spec/json_spec.lua"
    local path = os.tmpname()
    finally(function() os.remove(path) end)
    local fh = assert(io.open(path, "w"))
    fh:write("# ms path\n90000 spec/json_spec.lua\n1000 spec/client_spec.lua\n500 spec/options_spec.lua\n")
    fh:close()
    local rc, out = shards(2, spec, path)
    assert.equal(0, rc, out)
    assert.same({ "spec/json_spec.lua", "spec/client_spec.lua spec/options_spec.lua" }, runs(out))
    rc, out = shards(2, spec) -- (no weights: by size)
    assert.equal(0, rc, out)
    assert.same({ "spec/client_spec.lua", "spec/json_spec.lua spec/options_spec.lua" }, runs(out))
  end)

  it("with N 1 passes SPEC to the command unchanged", function()
    local rc, out = shards(1, "spec/json_spec.lua spec/hostile")
    assert.equal(0, rc, out)
    assert.same({ "spec/json_spec.lua spec/hostile" }, runs(out))
  end)
end)
