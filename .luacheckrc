-- luacheck configuration: `make lint-luacheck` (part of `make lint`, run by CI) checks lua/,
-- spec/, soak/, examples/, bench/, conformance/ and interop/ and allows no warning. One source serves Lua 5.1 to
-- 5.4 and LuaJIT, so the standard library is their union.
std = "lua51+lua52+lua53+lua54+luajit"
codes = true
max_line_length = false
-- Callbacks and methods keep the parameters of their documented signature even when a body does
-- not use them (handlers, fixtures' tool functions, `self` of interface methods).
unused_args = false
ignore = {
  "542", -- an empty if branch stands for "nothing to do in this case", with a comment
  "581", -- `not (x >= y)` is deliberate where NaN must count as out of range
}
-- Neovim: the adapter and the Neovim elicitation handler read `vim` (present only there).
read_globals = { "vim" }

-- Neovim plugin code and its headless specs set fields of `vim` (vim.g, vim.o, vim.notify).
files["spec/nvim/"] = { globals = { "vim" } }
files["lua/mcp/nvim/"] = { globals = { "vim" } }
files["plugin/"] = { globals = { "vim" } }
-- The Lua VM profiler wraps coroutine.create/wrap and sets the script's globals on purpose.
files["bench/lua_vm_profile.lua"] = { globals = { "coroutine", "_", "arg" } }

-- Short functions (issue 24): no function above cyclomatic complexity 30; split a longer one into
-- named steps.
max_cyclomatic_complexity = 30

-- Scripts whose main chunk is the program (a fixture server, the benchmark driver and report, the
-- conformance table): not library code, outside issue 24's limit.
files["spec/fixtures/skills_server.lua"] = { max_cyclomatic_complexity = false }
files["spec/fixtures/test_server.lua"] = { max_cyclomatic_complexity = false }
files["bench/lua_driver.lua"] = { max_cyclomatic_complexity = false }
files["scripts/check-structure.lua"] = { max_cyclomatic_complexity = false }
files["bench/report.lua"] = { max_cyclomatic_complexity = false }
files["conformance/table.lua"] = { max_cyclomatic_complexity = false }
-- The soak suite (soak/, `make soak`) is busted specs outside spec/.
files["soak/"] = { std = "+busted" }

-- The oidc leg's spec lives beside its harness (make oidc), not under spec/.
files["oidc/oidc_spec.lua"] = { std = "+busted" }

-- Spec files that spec/guard_spec.lua runs in a child busted (not named *_spec.lua, so that the
-- suite itself does not run them).
files["spec/fixtures/guard/"] = { std = "+busted" }
