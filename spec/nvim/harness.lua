-- A minimal test harness for the headless Neovim specs (busted does not run inside Neovim).
--
--   local T = dofile(root .. "/spec/nvim/harness.lua")
--   T.test("name", function() T.eq(1, 1) end)
--   T.finish()     -- prints a busted-style count line and quits Neovim with 0 or 1
--
-- Run by `make test-nvim`: nvim --headless -u NONE -i NONE -n --cmd 'set rtp^=<repo>' -c 'luafile <spec>' -c 'cquit 2'
-- (the trailing `cquit 2` fails the run when the spec died before T.finish()).
local T = { passed = 0, failed = 0, skipped = 0, failures = {} }

local uv = vim.uv or vim.loop
local t_start = uv.hrtime()

function T.out(...)
  io.stdout:write(table.concat({ ... }))
  io.stdout:flush()
end

--- Run one test; an error (or failed assertion) fails it, the rest still run.
function T.test(name, fn)
  local t0 = uv.hrtime()
  local ok, err = xpcall(fn, debug.traceback)
  local ms = (uv.hrtime() - t0) / 1e6
  if ok then
    T.passed = T.passed + 1
    T.out(("ok    %s (%.0f ms)\n"):format(name, ms))
  else
    T.failed = T.failed + 1
    T.failures[#T.failures + 1] = name
    T.out(("FAIL  %s (%.0f ms)\n      %s\n"):format(name, ms, tostring(err):gsub("\n", "\n      ")))
  end
end

function T.skip(name, why)
  T.skipped = T.skipped + 1
  T.out(("skip  %s: %s\n"):format(name, why))
end

local function show(v)
  if type(v) == "string" then return ("%q"):format(v) end
  return tostring(v)
end

function T.eq(want, got, what)
  if want ~= got then
    error(("%sexpected %s, got %s"):format(what and (what .. ": ") or "", show(want), show(got)), 2)
  end
end

function T.truthy(v, what)
  if not v then error((what or "expected a true value") .. ", got " .. show(v), 2) end
  return v
end

--- Wait (pumping Neovim's loop) until pred() holds; fails the test after ms.
function T.wait_for(pred, ms, what)
  if not vim.wait(ms, pred, 10) then error("timed out after " .. ms .. " ms waiting for " .. (what or "a condition"), 2) end
end

--- Print the counts in busted's format (.ci/run adds them up) and quit with 0 or 1.
function T.finish()
  local secs = (uv.hrtime() - t_start) / 1e9
  if #T.failures > 0 then T.out("failed: ", table.concat(T.failures, "; "), "\n") end
  T.out(("%d successes / %d failures / 0 errors / %d pending : %.3f seconds\n"):format(
    T.passed, T.failed, T.skipped, secs))
  vim.cmd("cquit " .. (T.failed == 0 and 0 or 1))
end

--- Multiplier for time bounds: 10 under sanitizers/valgrind (MCP_TEST_SANITIZER), else 1.
function T.slow()
  local s = os.getenv("MCP_TEST_SANITIZER")
  return (s ~= nil and s ~= "") and 10 or 1
end

return T
